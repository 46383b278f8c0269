package bench_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/bench"
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
// corpus they search first (the bulk ingest) and runs nothing else.
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
}
