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

// SealedDigestsMigration names the repair that gives sealed records keyed
// lookup digests: it removes the plaintext terms an earlier start wrote
// onto sealed entities (and gives them blindNames), and replaces the
// unkeyed factKey and skillKey of sealed facts and competences by keyed
// ones (docs/security.md).
const SealedDigestsMigration = "sealed_digests_v1"

// Unreadable returns how many sealed records the last Migrate found this
// server cannot open: those sealed under a key id it does not hold, those
// under a key id whose key changed (its check value differs from the one
// recorded in the database), and those that failed to open under a key id
// it holds.
// They stay as they are, unreadable; everything else is served.
func (db *DB) Unreadable() int { return db.unreadable }

// unopened reports whether recordFromProps failed (err) for the record
// props: a sealed value that does not open (a missing key, one that fails
// authentication) or does not decode. Start-up steps skip such a record,
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

// checks returns the check values (membrane.KeyCheck) of the keys this
// server holds, sorted: the fingerprint of its key set.
func (db *DB) checks() []string {
	out := make([]string, 0)
	for _, c := range db.sealer.KeyChecks() {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
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
// recorded by the first server that held it), found by the last Migrate.
func (db *DB) ChangedKeys() []string { return slices.Clone(db.changed) }

// migrationDue reports whether a data migration that skips the records it
// cannot open should run: it has not run to the end, and it has not yet
// run with every key this server holds, by check value (what it skipped
// then, it would skip again: rescanning the database at every start of a
// server missing a key is pointless; but a key restored under an id that
// held wrong material is a new key). A due migration makes the start count
// the sealed records again.
func (db *DB) migrationDue(ctx context.Context, name string) (bool, error) {
	due, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (bool, error) {
		row, err := single(ctx, tx, cypher.Must("migration_done"), map[string]any{"name": name})
		if err != nil || row == nil {
			return false, err
		}
		if done, _ := row.Values[0].(bool); done {
			return false, nil
		}
		if row.Values[1] == nil {
			return true, nil
		}
		tried := strs(row.Values[1])
		return slices.ContainsFunc(db.checks(), func(c string) bool { return !slices.Contains(tried, c) }), nil
	})
	if due {
		db.recount = true
	}
	return due, err
}

// finishMigration records that the migration name ran: to the end, or,
// when it skipped records it could not open, with this server's keys (by
// check value, merged with those recorded before).
func (db *DB) finishMigration(ctx context.Context, name string, skipped int) error {
	if skipped == 0 {
		return db.recordMigration(ctx, name)
	}
	_, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := single(ctx, tx, cypher.Must("migration_skipped"), map[string]any{
			"name": name, "now": db.Now().UTC(), "skipped": int64(skipped), "keys": db.checks()})
		return struct{}{}, err
	})
	return err
}

// keySealedDigests runs SealedDigestsMigration (see there), in batches of
// one transaction each, when due. A record that does not open loses its
// plaintext entity terms all the same, and keeps its other digests.
func (db *DB) keySealedDigests(ctx context.Context) error {
	if len(db.sealer.KeyIDs()) == 0 {
		return nil // nothing sealed can be opened, nor digests keyed
	}
	due, err := db.migrationDue(ctx, SealedDigestsMigration)
	if err != nil || !due {
		return err
	}
	skipped, err := db.keySealedDigestsIn(ctx, nil)
	if err != nil {
		return err
	}
	return db.finishMigration(ctx, SealedDigestsMigration, skipped)
}

// keySealedDigestsIn is the pass of SealedDigestsMigration over the sealed
// records of scopes (nil: all), without its bookkeeping; it returns how
// many records it could not open.
func (db *DB) keySealedDigestsIn(ctx context.Context, scopes []string) (int, error) {
	const batch = 500
	type result struct {
		n, skipped int
		last       string
	}
	skipped := 0
	err := inBatches(batch, func(after string) (int, string, error) {
		res, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
			var res result
			rows, err := collect(ctx, tx, cypher.Must("sealed_digests_missing"), map[string]any{"after": after, "limit": int64(batch), "scopes": scopesOrNil(scopes)})
			if err != nil {
				return res, err
			}
			res.n = len(rows)
			out := make([]map[string]any, 0, len(rows))
			for _, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				res.last = str(props["id"])
				r, err := db.recordFromProps(props)
				if db.unopened(props, err) {
					res.skipped++
					out = append(out, map[string]any{"id": res.last, "open": false})
					continue
				}
				p := map[string]any{"factKey": nil, "skillKey": nil, "payload": nil}
				db.keyedDigests(r, p)
				out = append(out, map[string]any{"id": r.ID, "open": true, "factKey": p["factKey"], "skillKey": p["skillKey"],
					"blindNames": p["blindNames"], "keyId": p["digestKeyId"]})
			}
			if len(out) == 0 {
				return res, nil
			}
			_, err = single(ctx, tx, cypher.Must("sealed_digests_set"), map[string]any{"rows": out})
			return res, err
		})
		skipped += res.skipped
		return res.n, res.last, err
	})
	if err != nil {
		return skipped, fmt.Errorf("key the digests of sealed records: %w", err)
	}
	return skipped, nil
}

// countUnreadable counts the sealed records this server cannot open: those
// sealed under a key id it does not hold, those under a key id whose key
// changed (checkKeys), and those the start-up migrations failed to open
// under a key id it holds. Counting by key id reads every sealed record,
// so it runs only when something changed: a migration ran at this start,
// or this server's keys (by check value) differ from those of the last
// count; otherwise the stored count is used (records sealed since by a
// replica with another key are counted at its next change).
func (db *DB) countUnreadable(ctx context.Context) error {
	checks := db.checks()
	counts, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (map[string]int, error) {
		counts := map[string]int{}
		if !db.recount {
			row, err := single(ctx, tx, cypher.Must("sealed_count_get"), nil)
			if err != nil {
				return nil, err
			}
			if row != nil && row.Values[0] != nil && slices.Equal(strs(row.Values[2]), checks) {
				ids, ns := strs(row.Values[0]), row.Values[1].([]any)
				for i, id := range ids {
					if i < len(ns) {
						n, _ := ns[i].(int64)
						counts[id] = int(n)
					}
				}
				return counts, nil
			}
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
			"keyIds": ids, "counts": ns, "checks": checks, "now": db.Now().UTC()})
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
