package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// searchTermsBatch is how many records one transaction of reindexTerms
// reads (and at most rewrites).
const searchTermsBatch = 1000

// reindexTerms gives every record whose search terms an earlier
// membrane.AnalysisVersion computed (no searchTermsVersion, or an older
// one) the current ones, computed in Go from its payload, in id-ordered
// batches of one transaction each, and returns how many it rewrote.
// Migrate runs it: a change of the analysis raises SchemaVersion. It does
// not wait for the eventually consistent index to apply the new terms:
// like any write, they become searchable just after their commit. Sealed
// records get no plaintext terms (nothing is decrypted; reindexBlind
// gives them blind terms). It is idempotent: a record already current is
// left alone.
func (db *DB) reindexTerms(ctx context.Context) (int, error) {
	total := 0
	err := inBatches(searchTermsBatch, func(after string) (int, string, error) {
		n, set, last, err := db.searchTermsBatch(ctx, after)
		total += set
		return n, last, err
	})
	return total, err
}

// searchTermsBatch re-indexes the records after id after, in one write
// transaction: it returns how many records it read, how many it rewrote
// and the last id.
func (db *DB) searchTermsBatch(ctx context.Context, after string) (int, int, string, error) {
	type result struct {
		n, set int
		last   string
	}
	r, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
		rows, err := collect(ctx, tx, cypher.Must("search_terms_batch"), map[string]any{
			"after": after, "limit": int64(searchTermsBatch), "version": int64(membrane.AnalysisVersion),
		})
		if err != nil || len(rows) == 0 {
			return result{}, err
		}
		set := make([]map[string]any, 0, len(rows))
		for _, row := range rows {
			id := str(row.Values[0])
			stale, ok := row.Values[1].(map[string]any)
			if !ok {
				continue
			}
			terms := ""
			if stale["encrypted"] != true {
				p, err := membrane.DecodePayload(membrane.MemoryType(str(stale["type"])), []byte(str(stale["payload"])))
				if err != nil {
					return result{}, fmt.Errorf("record %s: %w", id, err)
				}
				terms = membrane.IndexDocument(str(stale["scope"]), membrane.SearchTerms(p))
			}
			set = append(set, map[string]any{"id": id, "terms": terms})
		}
		if len(set) > 0 {
			if _, err := single(ctx, tx, cypher.Must("search_terms_set"), map[string]any{
				"rows": set, "version": int64(membrane.AnalysisVersion),
			}); err != nil {
				return result{}, err
			}
		}
		return result{n: len(rows), set: len(set), last: str(rows[len(rows)-1].Values[0])}, nil
	})
	if err != nil {
		return 0, 0, "", fmt.Errorf("search terms after %q: %w", after, err)
	}
	return r.n, r.set, r.last, nil
}
