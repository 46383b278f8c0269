package e2e_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// TestHybridByDefault: the binary with no embedding settings, as the
// README runs it, searches by vectors with the model inside Neo4j: a
// question that shares no word with the record it asks about finds it, and
// the result says the vector took part. Outside CI it is skipped when the
// test Neo4j has no model (one started before scripts/neo4j.sh installed
// it); in CI the test Neo4j always has it.
func TestHybridByDefault(t *testing.T) {
	db := openOwnStore(t, os.Getenv("NEO4J_URI"))
	if _, err := db.InDatabaseEmbedder(t.Context()); errors.Is(err, neo4j.ErrNoEmbedder) && os.Getenv("CI") != "true" {
		t.Skip("the test Neo4j has no embedding model: restart it with scripts/neo4j.sh (NEO4J_EMBED=on)")
	} else if err != nil {
		t.Fatal(err)
	}
	// The harness turns vector search off; clearing the setting leaves
	// the default.
	srv := startProcess(t, apptest.Options{APIKey: "e2e-key-" + membrane.NewID(), EncryptionKey: newEncryptionKey(t),
		Env: []string{"MEMBRANE_EMBEDDING_PROVIDER="}})
	if log := srv.Log.String(); !strings.Contains(log, "vector search on") || !strings.Contains(log, "all-minilm") {
		t.Fatalf("the server did not say vector search is on with the model inside Neo4j:\n%s", tail(log, 20))
	}
	sc := scope(t)
	var c struct {
		CaptureMemory struct{ Primary struct{ ID string } }
	}
	srv.do(t, `mutation($s: String) { captureMemory(input: {source: "e2e", content: "Dana cannot eat peanuts, she carries an epinephrine pen", scope: $s}) { primary { id } } }`,
		map[string]any{"s": sc}, &c)
	for _, in := range []string{"the stand-up moved to 9:30 on Tuesdays", "the VPN certificate expires in March"} {
		srv.do(t, `mutation($s: String, $c: JSON!) { captureMemory(input: {source: "e2e", content: $c, scope: $s}) { primary { id } } }`,
			map[string]any{"s": sc, "c": in}, nil)
	}
	var r struct {
		Retrieve struct {
			VectorUsed bool
			Hits       []struct {
				Record struct{ ID string }
				Parts  struct {
					Text   float64
					Vector *float64
				}
			}
		}
	}
	srv.do(t, `query($s: [String!]) { retrieve(input: {query: "which colleague has a food allergy", scopes: $s, limit: 3}) {
		vectorUsed hits { record { id } parts { text vector } } } }`, map[string]any{"s": []string{sc}}, &r)
	hits := r.Retrieve.Hits
	if !r.Retrieve.VectorUsed || len(hits) == 0 || hits[0].Record.ID != c.CaptureMemory.Primary.ID || hits[0].Parts.Vector == nil || hits[0].Parts.Text != 0 {
		t.Fatalf("vectorUsed %v, hits %+v: want the allergy first, found by its vector alone", r.Retrieve.VectorUsed, hits)
	}
}
