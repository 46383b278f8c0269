package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var (
	embedMissing = newSweep("embed_missing")
	embedSet     = cypher.Must("embed_set")
)

var _ membrane.EmbedStore = (*DB)(nil)

// Unembedded returns a page of the records that have no embedding by
// q.Model (see membrane.EmbedStore). A record whose sealed values do not
// open here comes back redacted, without text, and is not embedded.
func (db *DB) Unembedded(ctx context.Context, q membrane.UnembeddedQuery) ([]*membrane.Record, error) {
	params := map[string]any{"after": q.After, "limit": int64(q.Limit), "model": q.Model, "maxLevel": int64(q.Max.Level())}
	stmt := embedMissing.statement(membrane.SweepOptions{Scopes: q.Scopes}, params)
	return read(ctx, db, func(tx neo4j.ManagedTransaction) ([]*membrane.Record, error) {
		rows, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return nil, fmt.Errorf("records without embeddings: %w", err)
		}
		return db.readRows(rows)
	})
}

// SetEmbeddings stores the embed job's vectors in one transaction (see
// membrane.EmbedStore).
func (db *DB) SetEmbeddings(ctx context.Context, model string, max membrane.Sensitivity, vecs []membrane.RecordVector) (int64, error) {
	if len(vecs) == 0 {
		return 0, nil
	}
	rows := make([]map[string]any, len(vecs))
	for i, v := range vecs {
		rows[i] = map[string]any{"id": v.ID, "version": v.Version, "vector": v.Vector}
	}
	params := map[string]any{"vectors": rows, "model": model, "maxLevel": int64(max.Level())}
	return write(ctx, db, func(tx neo4j.ManagedTransaction) (int64, error) {
		row, err := single(ctx, tx, embedSet, params)
		if err != nil {
			return 0, fmt.Errorf("storing embeddings: %w", err)
		}
		n, _ := row.Values[0].(int64)
		return n, nil
	})
}
