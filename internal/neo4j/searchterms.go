package neo4j

import (
	"context"
	"fmt"
	"strconv"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// searchTermsBatch is how many records one transaction of the search terms
// migration reads (and at most rewrites).
const searchTermsBatch = 1000

// SearchTermsMigration names the Migration node recorded once every record
// has the search terms of membrane.AnalysisVersion: a new version is a new
// name, so the pass runs again once after an analysis change.
func SearchTermsMigration() string {
	return "search_terms_v" + strconv.Itoa(membrane.AnalysisVersion)
}

// backfillSearchTerms gives every record written before the current
// analysis (no searchTermsVersion, or an older one) its search terms,
// computed in Go from its payload, in id-ordered batches; then drops the
// earlier full-text index memory_text and records the migration, so that a
// later start only reads the Migration node. It does not wait for the
// eventually consistent index to apply the new terms (seconds per 10k
// records on a loaded machine): like any write, they become searchable
// just after their commit. Sealed records get no
// plaintext terms (nothing is decrypted). It is idempotent, and replicas
// starting together may both run it: they write the same terms, batches
// lock records in the same (id) order, and a record already current is
// left alone.
func (db *DB) backfillSearchTerms(ctx context.Context) error {
	name := SearchTermsMigration()
	done, err := db.migrationDone(ctx, name)
	if err != nil || done {
		return err
	}
	if err := inBatches(searchTermsBatch, func(after string) (int, string, error) {
		return db.searchTermsBatch(ctx, after)
	}); err != nil {
		return err
	}
	if err := db.schemaStatement(ctx, "DROP INDEX memory_text IF EXISTS"); err != nil {
		return fmt.Errorf("drop memory_text: %w", err)
	}
	return db.recordMigration(ctx, name)
}

// searchTermsBatch migrates the records after id after, in one write
// transaction: it returns how many records it read and the last id.
func (db *DB) searchTermsBatch(ctx context.Context, after string) (int, string, error) {
	type result struct {
		n    int
		last string
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
		return result{n: len(rows), last: str(rows[len(rows)-1].Values[0])}, nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("search terms after %q: %w", after, err)
	}
	return r.n, r.last, nil
}
