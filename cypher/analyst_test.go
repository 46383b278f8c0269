package cypher_test

import (
	"testing"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// The analyst queries are meant to be pasted into Neo4j Browser; each must
// compile and run against the real schema.
func TestAnalystQueriesRun(t *testing.T) {
	db := neo4jtest.DB(t)
	params := map[string]any{"id": "no-such-record", "actor": "no-such-actor", "scope": "no-such-scope", "name": "no-such-name"}
	queries := cypher.Analyst()
	if len(queries) < 5 {
		t.Fatalf("found %d analyst queries", len(queries))
	}
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			if err := db.RunReadOnly(t.Context(), q, params); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		})
	}
}
