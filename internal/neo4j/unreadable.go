package neo4j

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// Unreadable returns how many sealed records the last Start or Migrate
// found this server cannot open: those sealed under a key id it does not hold, those
// under a key id whose key changed (its check value differs from the one
// recorded in the database), and those that failed to open under a key id
// it holds.
// They stay as they are, unreadable; everything else is served.
func (db *DB) Unreadable() int { return db.unreadable }

// unopened reports whether recordFromProps failed (err) for the record
// props: a sealed value that does not open (a missing key, one that fails
// authentication) or does not decode. Migrate's re-index skips such a record,
// and it is remembered in db.failed with the key id that sealed it.
func (db *DB) unopened(props map[string]any, err error) bool {
	if err == nil {
		return false
	}
	if db.failed == nil {
		db.failed = map[string]string{}
	}
	db.failed[str(props["id"])] = sealKeyID(str(props["payload"]))
	return true
}

// sealKeyID is the id of the key that sealed v ("" when v is not sealed).
func sealKeyID(v string) string {
	if !membrane.IsSealed(v) {
		return ""
	}
	parts := strings.SplitN(v, ":", 3)
	return parts[1]
}

// checkKeys records the check value of each key this server holds the
// first time a server holds it, and remembers in db.changed the key ids
// whose recorded check differs: the key under that id changed, and the
// records sealed under it do not open here (countUnreadable counts them).
func (db *DB) checkKeys(ctx context.Context) error {
	db.changed = nil
	checks := db.sealer.KeyChecks()
	if len(checks) == 0 {
		return nil
	}
	keys := make([]map[string]any, 0, len(checks))
	for id, c := range checks {
		keys = append(keys, map[string]any{"id": id, "check": c})
	}
	changed, err := write(ctx, db, func(tx neo4j.ManagedTransaction) ([]string, error) {
		rows, err := collect(ctx, tx, cypher.Must("seal_key_checks"), map[string]any{"keys": keys, "now": db.Now().UTC()})
		if err != nil {
			return nil, err
		}
		var changed []string
		for _, row := range rows {
			if ok, _ := row.Values[1].(bool); !ok {
				changed = append(changed, str(row.Values[0]))
			}
		}
		return changed, nil
	})
	if err != nil {
		return err
	}
	slices.Sort(changed)
	db.changed = changed
	return nil
}

// ChangedKeys returns the ids of the keys this server holds whose key
// material differs from the one that sealed the records under that id (as
// recorded by the first server that held it), found by the last Start or Migrate.
func (db *DB) ChangedKeys() []string { return slices.Clone(db.changed) }

// countUnreadable counts the sealed records this server cannot open: those
// sealed under a key id it does not hold, those under a key id whose key
// changed (checkKeys), and those Migrate's re-index failed to open under a
// key id it holds. With scan (Migrate, Reseal) it counts the sealed records
// by key id, reading every one, and stores the count; without (a start) it
// reads the stored count only, so that a start scans no data: records
// sealed since under a key id this server lacks are counted at the next
// Migrate.
func (db *DB) countUnreadable(ctx context.Context, scan bool) error {
	counts, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (map[string]int, error) {
		counts := map[string]int{}
		if !scan {
			row, err := single(ctx, tx, cypher.Must("sealed_count_get"), nil)
			if err != nil || row == nil || row.Values[0] == nil {
				return counts, err
			}
			ids, ns := strs(row.Values[0]), row.Values[1].([]any)
			for i, id := range ids {
				if i < len(ns) {
					n, _ := ns[i].(int64)
					counts[id] = int(n)
				}
			}
			return counts, nil
		}
		rows, err := collect(ctx, tx, cypher.Must("sealed_key_ids"), nil)
		if err != nil {
			return nil, err
		}
		ids, ns := make([]string, 0, len(rows)), make([]int64, 0, len(rows))
		for _, row := range rows {
			n, _ := row.Values[1].(int64)
			counts[str(row.Values[0])] = int(n)
			ids, ns = append(ids, str(row.Values[0])), append(ns, n)
		}
		_, err = single(ctx, tx, cypher.Must("sealed_count_set"), map[string]any{
			"keyIds": ids, "counts": ns, "now": db.Now().UTC()})
		return counts, err
	})
	if err != nil {
		return fmt.Errorf("count unreadable records: %w", err)
	}
	held := db.sealer.KeyIDs()
	byKey := map[string]int{}
	for id, n := range counts {
		if !slices.Contains(held, id) || slices.Contains(db.changed, id) {
			byKey[id] += n
		}
	}
	for _, k := range db.failed {
		if slices.Contains(held, k) && !slices.Contains(db.changed, k) {
			byKey[k]++ // not counted above: it failed to open under a key that checks
		}
	}
	n := 0
	for _, c := range byKey {
		n += c
	}
	db.unreadable, db.byKey = n, byKey
	return nil
}

// UnreadableByKey breaks Unreadable down by the key id that sealed the
// records (key ids are not secret: every sealed value starts with its own).
func (db *DB) UnreadableByKey() map[string]int { return maps.Clone(db.byKey) }
