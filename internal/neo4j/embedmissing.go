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
	lockRecords  = cypher.Must("lock_records")
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
// membrane.EmbedStore). It reads the records under their locks first and
// keeps only the vectors whose text is still the record's
// (membrane.EmbedText), stored for the version read then: the records were
// read without a lock, and a read overlapping a revision's commit can be
// torn, its version from after the commit and its text from before, so a
// version read with the text cannot vouch for it.
func (db *DB) SetEmbeddings(ctx context.Context, model string, max membrane.Sensitivity, vecs []membrane.RecordVector) (int64, error) {
	if len(vecs) == 0 {
		return 0, nil
	}
	ids := make([]string, len(vecs))
	for i, v := range vecs {
		ids[i] = v.ID
	}
	return write(ctx, db, func(tx neo4j.ManagedTransaction) (int64, error) {
		locked, err := collect(ctx, tx, lockRecords, map[string]any{"ids": ids})
		if err != nil {
			return 0, fmt.Errorf("locking the records to embed: %w", err)
		}
		recs, err := db.readRows(locked)
		if err != nil {
			return 0, err
		}
		now := make(map[string]*membrane.Record, len(recs))
		for _, r := range recs {
			if !r.Redacted {
				now[r.ID] = r
			}
		}
		rows := make([]map[string]any, 0, len(vecs))
		for _, v := range vecs {
			if r := now[v.ID]; r != nil && membrane.EmbedText(r) == v.Text {
				rows = append(rows, map[string]any{"id": v.ID, "version": r.Version, "vector": v.Vector})
			}
		}
		if len(rows) == 0 {
			return 0, nil
		}
		row, err := single(ctx, tx, embedSet, map[string]any{"vectors": rows, "model": model, "maxLevel": int64(max.Level())})
		if err != nil {
			return 0, fmt.Errorf("storing embeddings: %w", err)
		}
		n, _ := row.Values[0].(int64)
		return n, nil
	})
}
