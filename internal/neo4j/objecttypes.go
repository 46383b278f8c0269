package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// ObjectTypesMigration names the Migration node recorded once the
// semantic objects written as text before they kept their type have it.
const ObjectTypesMigration = "semantic_object_types"

// objectTypesBatch is how many candidate records one transaction of the
// migration reads.
const objectTypesBatch = 1000

// backfillObjectTypes gives the semantic records written before a node's
// object property kept a number's or a boolean's type (an object of 30 was
// stored "30", so an analyst's WHERE m.object > 20 missed it) the
// property a write gives them today, membrane.BrowserFields of their
// payload, once, in id-ordered batches. The payload decides: a "30" whose
// payload holds the string "30" stays text. Sealed records are left alone
// (nothing is decrypted, and their node holds no object). Idempotent; a
// restored record no longer matches, and replicas starting together write
// the same values.
func (db *DB) backfillObjectTypes(ctx context.Context) error {
	done, err := db.migrationDone(ctx, ObjectTypesMigration)
	if err != nil || done {
		return err
	}
	if err := db.objectTypesIn(ctx, nil); err != nil {
		return err
	}
	return db.recordMigration(ctx, ObjectTypesMigration)
}

// objectTypesIn runs the migration's pass over the semantic records of
// scopes, or of every scope when scopes is nil, without its bookkeeping.
func (db *DB) objectTypesIn(ctx context.Context, scopes []string) error {
	return inBatches(objectTypesBatch, func(after string) (int, string, error) {
		return db.objectTypesBatch(ctx, after, scopes)
	})
}

// objectTypesBatch restores the candidates of scopes (nil: every scope)
// after id after in one write
// transaction: it returns how many it read and the last id.
func (db *DB) objectTypesBatch(ctx context.Context, after string, scopes []string) (int, string, error) {
	type result struct {
		n    int
		last string
	}
	r, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
		rows, err := collect(ctx, tx, cypher.Must("object_types_batch"), map[string]any{
			"after": after, "limit": int64(objectTypesBatch), "scopes": scopesOrNil(scopes),
		})
		if err != nil || len(rows) == 0 {
			return result{}, err
		}
		var set []map[string]any
		for _, row := range rows {
			id, old, payload := str(row.Values[0]), str(row.Values[1]), str(row.Values[2])
			if membrane.IsSealed(payload) {
				continue // unmarked but sealed: never opened here
			}
			p, err := membrane.DecodePayload(membrane.TypeSemantic, []byte(payload))
			if err != nil {
				return result{}, fmt.Errorf("record %s: %w", id, err)
			}
			if o := membrane.BrowserFields(p)["object"]; o != nil {
				if _, text := o.(string); !text {
					set = append(set, map[string]any{"id": id, "old": old, "object": o})
				}
			}
		}
		if len(set) > 0 {
			if _, err := single(ctx, tx, cypher.Must("object_types_set"), map[string]any{"rows": set}); err != nil {
				return result{}, err
			}
		}
		return result{n: len(rows), last: str(rows[len(rows)-1].Values[0])}, nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("semantic object types after %q: %w", after, err)
	}
	return r.n, r.last, nil
}
