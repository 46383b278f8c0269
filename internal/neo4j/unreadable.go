package neo4j

import (
	"context"
	"fmt"
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
// server cannot open: those sealed under a key id it does not hold, and
// those under a key id it holds that failed to open (the key changed).
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

// migrationDue reports whether a data migration that skips the records it
// cannot open should run: it has not run to the end, and it has not yet
// run with every key this server holds (what it skipped then, it would
// skip again: rescanning the database at every start of a server missing
// a key is pointless).
func (db *DB) migrationDue(ctx context.Context, name string) (bool, error) {
	return read(ctx, db, func(tx neo4j.ManagedTransaction) (bool, error) {
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
		return slices.ContainsFunc(db.sealer.KeyIDs(), func(id string) bool { return !slices.Contains(tried, id) }), nil
	})
}

// finishMigration records that the migration name ran: to the end, or,
// when it skipped records it could not open, with this server's keys.
func (db *DB) finishMigration(ctx context.Context, name string, skipped int) error {
	if skipped == 0 {
		return db.recordMigration(ctx, name)
	}
	_, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := single(ctx, tx, cypher.Must("migration_skipped"), map[string]any{
			"name": name, "now": db.Now().UTC(), "skipped": int64(skipped), "keys": db.sealer.KeyIDs()})
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
	const batch = 500
	type result struct {
		n, skipped int
		last       string
	}
	skipped := 0
	err = inBatches(batch, func(after string) (int, string, error) {
		res, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
			var res result
			rows, err := collect(ctx, tx, cypher.Must("sealed_digests_missing"), map[string]any{"after": after, "limit": int64(batch)})
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
		return fmt.Errorf("key the digests of sealed records: %w", err)
	}
	return db.finishMigration(ctx, SealedDigestsMigration, skipped)
}

// countUnreadable counts the sealed records this server cannot open: those
// sealed under a key id it does not hold (one read of every sealed
// record's key id), and those the start-up migrations failed to open under
// a key id it holds.
func (db *DB) countUnreadable(ctx context.Context) error {
	held := db.sealer.KeyIDs()
	n, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (int, error) {
		rows, err := collect(ctx, tx, cypher.Must("sealed_key_ids"), nil)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, row := range rows {
			if !slices.Contains(held, str(row.Values[0])) {
				c, _ := row.Values[1].(int64)
				n += int(c)
			}
		}
		return n, nil
	})
	if err != nil {
		return fmt.Errorf("count unreadable records: %w", err)
	}
	for _, k := range db.failed {
		if slices.Contains(held, k) {
			n++ // not counted above: the key changed under its id
		}
	}
	db.unreadable = n
	return nil
}
