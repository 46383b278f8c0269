package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// reindexBlind gives the sealed records of scopes (nil: all) whose blind
// terms an earlier membrane.AnalysisVersion computed (or that have none)
// the current ones, decrypting them in Go, in batches of one transaction
// each, and returns how many it rewrote and how many it skipped: those
// sealed under a key this server lacks (or that do not open), which cannot
// be found by text until Migrate runs with their key. A skipped record is
// not an error: the rest of the database stays searchable. Migrate runs
// it, beside reindexTerms.
func (db *DB) reindexBlind(ctx context.Context, scopes []string) (migrated, skipped int, err error) {
	if !db.sealer.Searchable(membrane.SensitivityHyper.Level()) {
		return 0, 0, nil // no key: nothing sealed can be opened
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
		migrated += res.migrated
		skipped += res.skipped
		return res.n, res.last, err
	})
	if err != nil {
		return migrated, skipped, fmt.Errorf("blind terms: %w", err)
	}
	return migrated, skipped, nil
}
