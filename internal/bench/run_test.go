package bench_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/bench"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRunEveryWorkload runs every workload briefly against a server over
// the real Neo4j: each prepares and runs all its operations without an
// error, and reports figures for them. It measures nothing (the figures
// of docs/BENCHMARKS.md come from the command on an idle machine).
func TestRunEveryWorkload(t *testing.T) {
	srv := apptest.Start(t, apptest.Options{EncryptionKey: apptest.SealKey()})
	c := bench.NewClient(srv.URL+"/graphql", "", 8)
	cfg := bench.Config{Ops: 16, Records: 2000, ColdOps: 5, Scope: neo4jtest.Scope(t)}
	sums, err := bench.Run(t.Context(), c, cfg, func(s bench.Summary) {
		t.Logf("%s (c=%d): %d ok, %d errors, p50 %v", s.Name, s.Clients, s.Ops, s.Errors, s.P50)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(bench.Workloads()) {
		t.Fatalf("%d workloads ran, want %d", len(sums), len(bench.Workloads()))
	}
	for _, s := range sums {
		want := cfg.Ops
		switch {
		case s.Items > 1:
			want = cfg.Records / s.Items
		case s.Name == "point read, cold":
			want = cfg.ColdOps
		}
		name := fmt.Sprintf("%s (c=%d)", s.Name, s.Clients)
		if s.Errors != 0 || s.Ops != want {
			t.Errorf("%s: %d ok, %d errors (first: %v), want %d ok", name, s.Ops, s.Errors, s.Err, want)
		}
		if s.P50 <= 0 || s.P99 < s.P50 || s.PerSecond <= 0 || s.P99 > time.Minute {
			t.Errorf("%s: figures %+v", name, s)
		}
	}
}

// TestRunOnlyRetrieval: a run of the retrieval workloads alone writes the
// corpus they search first (the bulk ingest) and runs nothing else; a run
// given that corpus (Config.Corpus) searches it and writes none.
func TestRunOnlyRetrieval(t *testing.T) {
	srv := apptest.Start(t, apptest.Options{EncryptionKey: apptest.SealKey()})
	cfg := bench.Config{Ops: 4, Records: 1000, Scope: neo4jtest.Scope(t), Only: regexp.MustCompile(`^retrieve top`)}
	sums, err := bench.Run(t.Context(), bench.NewClient(srv.URL+"/graphql", "", 8), cfg, func(bench.Summary) {})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sums {
		names = append(names, fmt.Sprintf("%s c=%d", s.Name, s.Clients))
	}
	if want := []string{"ingestBatch 1,000 c=1", "retrieve top-20 c=1", "retrieve top-20 c=8"}; !slices.Equal(names, want) {
		t.Fatalf("ran %q, want %q", names, want)
	}

	// A second run searching that corpus writes none (and finds it).
	var before struct{ Records struct{ TotalCount int } }
	count := `query($s: [String!]) { records(filter: {scopes: $s}, first: 1) { totalCount } }`
	c := bench.NewClient(srv.URL+"/graphql", "", 8)
	if err := c.Do(t.Context(), count, map[string]any{"s": []string{cfg.Scope}}, &before); err != nil {
		t.Fatal(err)
	}
	again := bench.Config{Ops: 4, Records: 1000, Scope: neo4jtest.Scope(t), Corpus: cfg.Scope, Only: regexp.MustCompile(`^retrieve top-20$|^records page$`)}
	sums, err = bench.Run(t.Context(), c, again, func(bench.Summary) {})
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, s := range sums {
		names = append(names, fmt.Sprintf("%s c=%d", s.Name, s.Clients))
	}
	if want := []string{"retrieve top-20 c=1", "retrieve top-20 c=8", "records page c=1"}; !slices.Equal(names, want) {
		t.Fatalf("with a corpus, ran %q, want %q", names, want)
	}
	var after struct{ Records struct{ TotalCount int } }
	if err := c.Do(t.Context(), count, map[string]any{"s": []string{cfg.Scope}}, &after); err != nil {
		t.Fatal(err)
	}
	if before.Records.TotalCount != 1000 || after.Records.TotalCount != 1000 {
		t.Fatalf("the corpus holds %d records, then %d: want 1,000 both times", before.Records.TotalCount, after.Records.TotalCount)
	}
}

// TestRunEmbedsTheCorpus: against a server with vector search, the corpus
// gets every vector from the embed job before it is searched (a row of its
// own after the bulk ingest), so that retrieval is measured on a settled
// store: afterwards each of a query's hits has its similarity.
func TestRunEmbedsTheCorpus(t *testing.T) {
	db := neo4jtest.DB(t)
	if _, err := db.InDatabaseEmbedder(t.Context()); errors.Is(err, neo4j.ErrNoEmbedder) && os.Getenv("CI") != "true" {
		t.Skip("the test Neo4j has no embedding model: restart it with scripts/neo4j.sh (NEO4J_EMBED=on)")
	} else if err != nil {
		t.Fatal(err)
	}
	scope := neo4jtest.Scope(t)
	neo4jtest.DeleteAtEnd(t, db, scope)
	// The embed job covers this test's scope only: the database is shared.
	srv := apptest.Start(t, apptest.Options{EncryptionKey: apptest.SealKey(),
		Env: []string{"MEMBRANE_EMBEDDING_PROVIDER=", "MEMBRANE_JOBS_SCOPES=" + scope}})
	cfg := bench.Config{Ops: 2, Records: 1000, Scope: scope, Only: regexp.MustCompile(`^retrieve top-20$`)}
	c := bench.NewClient(srv.URL+"/graphql", "", 8)
	sums, err := bench.Run(t.Context(), c, cfg, func(bench.Summary) {})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sums {
		names = append(names, fmt.Sprintf("%s c=%d", s.Name, s.Clients))
	}
	want := []string{"ingestBatch 1,000 c=1", "embed job (the corpus's vectors) c=1", "retrieve top-20 c=1", "retrieve top-20 c=8"}
	if !slices.Equal(names, want) {
		t.Fatalf("ran %q, want %q", names, want)
	}
	var out struct {
		Retrieve struct {
			VectorUsed bool
			Hits       []struct{ Parts struct{ Vector *float64 } }
		}
	}
	if err := c.Do(t.Context(), `query($s: [String!]) { retrieve(input: {query: "postgres connection pool", scopes: $s, limit: 100}) {
		vectorUsed hits { parts { vector } } } }`, map[string]any{"s": []string{scope}}, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Retrieve.VectorUsed || len(out.Retrieve.Hits) < 50 {
		t.Fatalf("vectorUsed %v, %d hits: want vector search and the corpus's matches", out.Retrieve.VectorUsed, len(out.Retrieve.Hits))
	}
	for i, h := range out.Retrieve.Hits {
		if h.Parts.Vector == nil {
			t.Fatalf("hit %d has no vector: the corpus was searched before it had its vectors", i)
		}
	}
}
