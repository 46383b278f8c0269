package neo4j_test

import (
	"context"
	"os"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// BenchmarkRetrieveParts takes a retrieval with vectors apart, at the scale
// of a corpus that cmd/bench wrote and embedded (docs/BENCHMARKS.md,
// "Retrieval quality and speed"): embedding the query in Neo4j, the vector
// index query for 100, 50 and 20 neighbours, 200 full-text matches with and
// without the cosine of each, and the whole retrieval (DB.Retrieve,
// limit 20) on full text and with the query's vector. It needs the corpus's
// scope in MEMBRANE_BENCH_CORPUS and the Neo4j holding it in NEO4J_URI, and
// is skipped without them:
//
//	BENCH_KEEP=1 scripts/bench.sh -records 100000 -only '^retrieve top-20$'   # prints the scope and the kept dir
//	NEO4J_HOME_DIR=<dir>/neo4j NEO4J_BOLT_PORT=17720 NEO4J_HTTP_PORT=0 scripts/neo4j.sh start
//	MEMBRANE_BENCH_CORPUS=bench-… NEO4J_URI=bolt://127.0.0.1:17720 go test -run '^$' -bench RetrieveParts -benchtime 200x ./internal/neo4j/
func BenchmarkRetrieveParts(b *testing.B) {
	scope := os.Getenv("MEMBRANE_BENCH_CORPUS")
	if scope == "" {
		b.Skip("MEMBRANE_BENCH_CORPUS names no corpus (a scope cmd/bench wrote)")
	}
	db := neo4jtest.DB(b)
	ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("bench"))
	emb, err := db.InDatabaseEmbedder(ctx)
	if err != nil {
		b.Fatal(err)
	}
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close(context.Background()) })
	// The bench's queries (internal/bench), each with its vector.
	queries := []string{"postgres connection pool", "deploy rollback", "kafka lag", "billing invoice", "token refresh timeout",
		"search index backup", "certificate release incident", "cache retry"}
	vecs := make([][]float64, len(queries))
	for i, q := range queries {
		v, err := emb.Embed(ctx, []string{q})
		if err != nil {
			b.Fatal(err)
		}
		vecs[i] = v[0]
	}
	index := "memory_embedding_384"
	statements := []struct{ name, cypher string }{
		{"embed", `RETURN size(membrane.embed([$q])) AS n`},
		{"vector-100", `CALL db.index.vector.queryNodes($index, 100, $v) YIELD node RETURN count(*)`},
		{"vector-50", `CALL db.index.vector.queryNodes($index, 50, $v) YIELD node RETURN count(*)`},
		{"vector-20", `CALL db.index.vector.queryNodes($index, 20, $v) YIELD node RETURN count(*)`},
		{"fulltext-200", `CALL db.index.fulltext.queryNodes('memory_terms', 'postgr connect pool', {limit: 200}) YIELD node RETURN count(*)`},
		{"fulltext-200-cosine", `CALL db.index.fulltext.queryNodes('memory_terms', 'postgr connect pool', {limit: 200}) YIELD node
			OPTIONAL MATCH (node)-[:HAS_EMBEDDING]->(e:MemoryVector) RETURN max(vector.similarity.cosine(e.vector, $v))`},
	}
	for _, st := range statements {
		b.Run(st.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				params := map[string]any{"q": queries[i%len(queries)], "v": vecs[i%len(vecs)], "index": index}
				if _, err := driver.ExecuteQuery(ctx, d, st.cypher, params, driver.EagerResultTransformer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	limit := int64(20)
	for _, withVector := range []bool{false, true} {
		name := "retrieve-text"
		if withVector {
			name = "retrieve-vectors"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				q, err := membrane.NewRetrieveQuery(&queries[i%len(queries)], nil, []string{scope}, nil, &limit, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				if withVector {
					q.Vector = vecs[i%len(vecs)]
				}
				if _, err := db.Retrieve(ctx, q, membrane.DefaultSelectionThreshold); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
