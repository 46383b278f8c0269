package neo4j_test

import (
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// testDims are the dimensions of the embeddings every test that searches
// by vector uses (graph's fake embedder, the eval's offline one): the one
// vector index the shared test database can hold.
const testDims = 384

// TestEnsureVectorIndexOtherDimensions: Neo4j keeps one vector index on
// (:MemoryVector).vector, and CREATE ... IF NOT EXISTS for other dimensions
// silently does nothing, so an embedder of other dimensions used to start
// and then fail every retrieval with a query vector (no such index). Start
// now fails, naming the index in the way and how to switch models.
func TestEnsureVectorIndexOtherDimensions(t *testing.T) {
	db := neo4jtest.DB(t)
	if err := db.EnsureVectorIndex(t.Context(), testDims); err != nil {
		t.Fatalf("the test dimensions: %v", err)
	}
	err := db.EnsureVectorIndex(t.Context(), testDims+1)
	if err == nil {
		t.Fatalf("EnsureVectorIndex(%d) with %s in place: no error", testDims+1, neo4j.VectorIndexName(testDims))
	}
	for _, want := range []string{"385 dimensions", neo4j.VectorIndexName(testDims) + " (384 dimensions)", "DROP INDEX " + neo4j.VectorIndexName(testDims)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// And the index of the test dimensions is still the one in place.
	if err := db.EnsureVectorIndex(t.Context(), testDims); err != nil {
		t.Fatalf("the test dimensions after: %v", err)
	}
}
