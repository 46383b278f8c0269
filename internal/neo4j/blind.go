package neo4j

import (
	"context"
	"fmt"
	"strconv"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// BlindTermsMigration names the one-time migration that gives sealed
// records written before the blind index (or the current analysis) their
// blind terms: a Migration node per membrane.AnalysisVersion, so that a
// change of the analysis recomputes them once, as it does the plaintext
// terms.
func BlindTermsMigration() string {
	return "blind_terms_v" + strconv.Itoa(membrane.AnalysisVersion)
}

// BlindBackfill reports what the last Migrate did for the blind index:
// how many sealed records it gave blind terms, and how many it skipped
// because they are sealed under a key this server lacks (or do not open).
// Skipped records cannot be found by text until a server holding their key
// starts (the migration runs again at a start with a key it has not run
// with, until none is skipped).
func (db *DB) BlindBackfill() (migrated, skipped int) {
	return db.blindMigrated, db.blindSkipped
}

// backfillBlindTerms computes the blind terms of sealed records that have
// none, decrypting them in Go, in batches of one transaction each, unless
// a previous start finished it. A record that does not open is skipped and
// counted, not an error: the rest of the database stays searchable.
func (db *DB) backfillBlindTerms(ctx context.Context) error {
	return db.blindBackfill(ctx, BlindTermsMigration(), nil)
}

// blindBackfill runs the blind terms migration over the sealed records of
// scopes (nil: all), recorded as the migration name.
func (db *DB) blindBackfill(ctx context.Context, name string, scopes []string) error {
	db.blindMigrated, db.blindSkipped = 0, 0
	if !db.sealer.Searchable(membrane.SensitivityHyper.Level()) {
		return nil // no key: nothing sealed can be opened
	}
	due, err := db.migrationDue(ctx, name)
	if err != nil || !due {
		return err
	}
	const batch = 500
	type result struct {
		n, migrated, skipped int
		last                 string
	}
	err = inBatches(batch, func(after string) (int, string, error) {
		res, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
			var res result
			rows, err := collect(ctx, tx, cypher.Must("blind_missing"), map[string]any{
				"after": after, "limit": int64(batch), "version": int64(membrane.AnalysisVersion), "scopes": scopesOrNil(scopes)})
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
					continue
				}
				p := map[string]any{"payload": nil}
				if err := db.blindTerms(r, p); err != nil {
					return res, err
				}
				if p["blindKeyId"] == nil {
					continue // no terms to index
				}
				out = append(out, map[string]any{"id": r.ID, "terms": p["blindTerms"], "keyId": p["blindKeyId"]})
			}
			if len(out) > 0 {
				row, err := single(ctx, tx, cypher.Must("blind_set"), map[string]any{"rows": out, "version": int64(membrane.AnalysisVersion)})
				if err != nil {
					return res, err
				}
				n, _ := row.Values[0].(int64)
				res.migrated = int(n)
			}
			return res, nil
		})
		db.blindMigrated += res.migrated
		db.blindSkipped += res.skipped
		return res.n, res.last, err
	})
	if err != nil {
		return fmt.Errorf("blind terms: %w", err)
	}
	// With records skipped, it runs again at a start with another key.
	return db.finishMigration(ctx, name, db.blindSkipped)
}
