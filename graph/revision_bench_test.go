package graph_test

// Benchmarks of revisions and lineage reads through the real GraphQL HTTP
// API over the real Neo4j (see docs/BENCHMARKS.md, "Revisions"):
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test ./graph/ -run '^$' \
//	  -bench 'SupersedeParallel|LineageDepth100|History' -benchtime 3s -count 2
//
// Identifiers here carry a rev prefix so that they cannot clash with other
// benchmark files of the package.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// revSeedFacts creates n active semantic records in scope with ingestBatch
// and returns their ids.
func revSeedFacts(b *testing.B, c *client, scope string, n int) []string {
	b.Helper()
	const chunk = 2000
	ids := make([]string, 0, n)
	for len(ids) < n {
		in := make([]any, min(chunk, n-len(ids)))
		for i := range in {
			in[i] = factInput(scope, fmt.Sprint("pool-", len(ids)+i))
		}
		var out struct{ IngestBatch []struct{ ID string } }
		c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in, actor: "bench") { id } }`, map[string]any{"in": in}, &out)
		if len(out.IngestBatch) != len(in) {
			b.Fatalf("ingestBatch created %d records, want %d", len(out.IngestBatch), len(in))
		}
		for _, r := range out.IngestBatch {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// BenchmarkSupersedeParallel supersedes fresh records from c concurrent
// clients. Every operation supersedes a distinct active record of a pool
// created before the timer starts (operation i takes record i), so no two
// operations conflict. It reports supersedes per second and the latency of
// one supersede.
func BenchmarkSupersedeParallel(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", clients), func(b *testing.B) {
			c := newProductionClient(b)
			scope := benchScope(b)
			pool := revSeedFacts(b, c, scope, b.N)
			reqs := make([][]byte, len(pool))
			for i, old := range pool {
				reqs[i] = body(b, supersedeQ, map[string]any{"old": old, "in": factInput(scope, fmt.Sprint("next-", i))})
			}
			reportOps(b, concurrently(b, clients, func(i int) error {
				var out struct {
					Supersede struct {
						ID, Status string
						Version    int
					}
				}
				err := (&benchClient{url: c.URL, key: c.Key}).post(reqs[i], &out)
				if err == nil && (out.Supersede.ID == "" || out.Supersede.ID == pool[i] || out.Supersede.Status != "ACTIVE" || out.Supersede.Version != 1) {
					err = fmt.Errorf("supersede of %s returned %+v", pool[i], out.Supersede)
				}
				if err != nil {
					return fmt.Errorf("record %d: %w", i, err)
				}
				return nil
			}))
			// Every pool record was retired and has exactly one successor.
			ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("bench"))
			active, err := c.DB.CountRecords(ctx, membrane.RecordFilter{Scopes: []string{scope}, Statuses: []membrane.RevisionStatus{membrane.StatusActive}})
			if err != nil {
				b.Fatal(err)
			}
			retracted, err := c.DB.CountRecords(ctx, membrane.RecordFilter{Scopes: []string{scope}, Statuses: []membrane.RevisionStatus{membrane.StatusSuperseded}})
			if err != nil {
				b.Fatal(err)
			}
			if active != int64(b.N) || retracted != int64(b.N) {
				b.Fatalf("after %d supersedes: %d active, %d superseded records, want %d of each", b.N, active, retracted, b.N)
			}
		})
	}
}

// reportOps reports the operations per second of a run of concurrent
// clients and the latencies of its operations.
func reportOps(b *testing.B, lat latencies) {
	b.Helper()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	lat.report(b)
}

// revChain is a supersede chain of 101 records, oldest first: ids[i+1]
// superseded ids[i]. It is built once per test binary and shared by
// BenchmarkLineageDepth100 and BenchmarkHistory.
var revChain struct {
	once sync.Once
	ids  []string
	err  error
}

const revChainLen = 101

func revChainIDs(b *testing.B, c *client) []string {
	b.Helper()
	revChain.once.Do(func() {
		scope := neo4jtest.Scope(b)
		var created struct{ CreateRecord struct{ ID string } }
		if err := (&benchClient{url: c.URL, key: c.Key}).post(body(b, `mutation($in: RecordInput!) { createRecord(input: $in, actor: "bench") { id } }`,
			map[string]any{"in": factInput(scope, "v0")}), &created); err != nil {
			revChain.err = err
			return
		}
		ids := []string{created.CreateRecord.ID}
		for i := 1; i < revChainLen; i++ {
			var out struct{ Supersede struct{ ID string } }
			if err := (&benchClient{url: c.URL, key: c.Key}).post(body(b, supersedeQ, map[string]any{"old": ids[i-1], "in": factInput(scope, fmt.Sprint("v", i))}), &out); err != nil {
				revChain.err = fmt.Errorf("supersede %d of the chain: %w", i, err)
				return
			}
			ids = append(ids, out.Supersede.ID)
		}
		revChain.ids = ids
	})
	if revChain.err != nil {
		b.Fatal(revChain.err)
	}
	return revChain.ids
}

const revLineageQ = `query($id: ID!) { lineage(id: $id, direction: ANCESTORS, maxDepth: 100, limit: 200) {
  nodes { depth record { id status } } edges { predicate sourceId targetId } } }`

// BenchmarkLineageDepth100 reads the whole ancestry of the head of a
// 100-supersede chain: 101 nodes and 100 edges per query.
func BenchmarkLineageDepth100(b *testing.B) {
	c := newProductionClient(b)
	chain := revChainIDs(b, c)
	head := chain[len(chain)-1]
	req := body(b, revLineageQ, map[string]any{"id": head})
	// The record at depth d is chain[100-d]; each edge is chain[i+1] SUPERSEDES chain[i].
	wantEdges := map[string]bool{}
	for i := 0; i+1 < len(chain); i++ {
		wantEdges[chain[i+1]+">"+chain[i]] = true
	}
	var durs []time.Duration
	for b.Loop() {
		var out struct {
			Lineage struct {
				Nodes []struct {
					Depth  int
					Record struct{ ID, Status string }
				}
				Edges []struct{ Predicate, SourceID, TargetID string }
			}
		}
		start := time.Now()
		err := (&benchClient{url: c.URL, key: c.Key}).post(req, &out)
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		l := out.Lineage
		if len(l.Nodes) != revChainLen || len(l.Edges) != revChainLen-1 {
			b.Fatalf("lineage has %d nodes and %d edges, want %d and %d", len(l.Nodes), len(l.Edges), revChainLen, revChainLen-1)
		}
		for _, n := range l.Nodes {
			wantStatus := "SUPERSEDED"
			if n.Depth == 0 {
				wantStatus = "ACTIVE"
			}
			if n.Depth < 0 || n.Depth >= revChainLen || n.Record.ID != chain[revChainLen-1-n.Depth] || n.Record.Status != wantStatus {
				b.Fatalf("lineage node %+v is not chain[%d] (%s)", n, revChainLen-1-n.Depth, wantStatus)
			}
		}
		seen := map[string]bool{}
		for _, e := range l.Edges {
			k := e.SourceID + ">" + e.TargetID
			if e.Predicate != "SUPERSEDES" || !wantEdges[k] || seen[k] {
				b.Fatalf("unexpected lineage edge %+v", e)
			}
			seen[k] = true
		}
	}
	latencies(durs).report(b)
}

const revHistoryQ = `query($id: ID!) { record(id: $id) { history { id } current { id } } }`

// BenchmarkHistory reads the history (all 101 records, oldest first) and
// the current head of a 100-supersede chain from its middle record.
func BenchmarkHistory(b *testing.B) {
	c := newProductionClient(b)
	chain := revChainIDs(b, c)
	middle, head := chain[len(chain)/2], chain[len(chain)-1]
	req := body(b, revHistoryQ, map[string]any{"id": middle})
	var durs []time.Duration
	for b.Loop() {
		var out struct {
			Record struct {
				History []struct{ ID string }
				Current struct{ ID string }
			}
		}
		start := time.Now()
		err := (&benchClient{url: c.URL, key: c.Key}).post(req, &out)
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		r := out.Record
		if len(r.History) != revChainLen || r.Current.ID != head {
			b.Fatalf("history has %d entries and current %s, want %d and %s", len(r.History), r.Current.ID, revChainLen, head)
		}
		for i, h := range r.History {
			if h.ID != chain[i] {
				b.Fatalf("history[%d] = %s, want %s", i, h.ID, chain[i])
			}
		}
	}
	latencies(durs).report(b)
}
