package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
)

// Load test knobs. CI runs the defaults (60 s); shorten it while iterating:
//
//	MEMBRANE_LOAD_DURATION=10s NEO4J_URI=bolt://127.0.0.1:17687 go test -count=1 -run TestLoad -v ./e2e/
const (
	loadClients = 32
	// loadMaxPerClient bounds the requests of each client, so a fast
	// machine cannot write without limit into the shared test database.
	loadMaxPerClient = 4000
)

const (
	recordQ   = `query($id: ID!) { record(id: $id) { id type status salience version payload { ... on SemanticPayload { subject predicate } } } }`
	recordsQ  = `query($s: [String!]) { records(filter: {scopes: $s, statuses: [ACTIVE]}, first: 20) { nodes { id salience } pageInfo { hasNextPage endCursor } } }`
	lineageQ  = `query($id: ID!) { lineage(id: $id, direction: BOTH, maxDepth: 5, limit: 50) { nodes { depth record { id status } } edges { predicate sourceId targetId } truncated } }`
	retrieveQ = `query($q: String!, $s: [String!]) { retrieve(input: {query: $q, scopes: $s, limit: 10}) { hits { score record { id } } } }`
)

// latencies collects request durations by operation.
type latencies struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

func (l *latencies) add(op string, d time.Duration) {
	l.mu.Lock()
	l.by[op] = append(l.by[op], d)
	l.mu.Unlock()
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// TestLoad runs 32 concurrent clients against the server (in-process) over
// loopback for MEMBRANE_LOAD_DURATION (default 60 s): each mixes reads
// (record, records, lineage, retrieve) with writes (createRecord, supersede,
// reinforce) on records of its own. It reports throughput and latency
// percentiles, and fails on any 5xx, transport error, GraphQL error or
// acknowledged write that cannot be read back afterwards.
func TestLoad(t *testing.T) {
	dur := 60 * time.Second
	if v := os.Getenv("MEMBRANE_LOAD_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("MEMBRANE_LOAD_DURATION: %v", err)
		}
		dur = d
	}
	key := "e2e-load-" + membrane.NewID()
	// The admin's rate limit (500/s by default) is lifted: this test loads
	// the server, not the limiter (TestRateLimit and the soak test's
	// clients cover that), and 32 clients reach 500/s once reads are fast:
	// every answer past the limit is an instant 429, and the clients then
	// spent the run on those.
	srv := startServer(t, apptest.Options{Neo4jURI: neo4jURI(t), APIKey: key, EncryptionKey: newEncryptionKey(t),
		Env: []string{"MEMBRANE_ADMIN_RATE_LIMIT=1000000", "MEMBRANE_ADMIN_RATE_BURST=1000000"}})
	sc := scope(t)
	cleanupScope(t, sc)
	l := newLedger()
	lat := &latencies{by: map[string][]time.Duration{}}

	var (
		mu                      sync.Mutex
		fivexx, transport       int
		gqlErrors               = map[string]int{}
		examples                []string
		requests, writes, reads int
	)
	fail := func(kind, msg string) {
		mu.Lock()
		defer mu.Unlock()
		if len(examples) < 10 {
			examples = append(examples, kind+": "+msg)
		}
	}
	subjects := []string{"postgres", "pool", "auth", "cache", "queue"}

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newReviser(srv, sc, l, uint64(100+i))
			w.ops = []string{"create", "supersede", "reinforce"}
			for n := 0; n < loadMaxPerClient && ctx.Err() == nil; n++ {
				// 60 % reads once the client has records to read.
				read := len(w.pool) > 0 && w.rng.IntN(10) < 6
				var (
					op   string
					resp gqltest.Response
					err  error
				)
				t0 := time.Now()
				if read {
					id := w.pool[w.rng.IntN(len(w.pool))]
					switch w.rng.IntN(4) {
					case 0:
						op = "record"
						resp, err = srv.post(context.Background(), recordQ, map[string]any{"id": id})
					case 1:
						op = "records"
						resp, err = srv.post(context.Background(), recordsQ, map[string]any{"s": []string{sc}})
					case 2:
						op = "lineage"
						resp, err = srv.post(context.Background(), lineageQ, map[string]any{"id": id})
					case 3:
						op = "retrieve"
						resp, err = srv.post(context.Background(), retrieveQ, map[string]any{"q": subjects[w.rng.IntN(len(subjects))] + " is", "s": []string{sc}})
					}
				} else {
					// Not ctx: a write in flight at the deadline completes,
					// so its acknowledgement is known.
					op, resp, err = w.step(context.Background())
				}
				d := time.Since(t0)
				mu.Lock()
				requests++
				if read {
					reads++
				} else {
					writes++
				}
				switch {
				case err != nil:
					transport++
				case resp.Status >= 500:
					fivexx++
				case len(resp.Errors) > 0:
					gqlErrors[resp.Code()]++
				}
				mu.Unlock()
				switch {
				case err != nil:
					fail(op, err.Error())
				case resp.Status >= 500 || len(resp.Errors) > 0:
					fail(op, fmt.Sprintf("status %d %+v", resp.Status, resp.Errors))
				default:
					lat.add(op, d)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	var all []time.Duration
	var report strings.Builder
	fmt.Fprintf(&report, "%d clients, %s: %d requests (%d reads, %d writes), %.0f req/s\n",
		loadClients, elapsed.Round(time.Millisecond), requests, reads, writes, float64(requests)/elapsed.Seconds())
	ops := make([]string, 0, len(lat.by))
	for op := range lat.by {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	fmt.Fprintf(&report, "%-10s %7s %8s %8s %8s\n", "op", "count", "p50", "p95", "p99")
	for _, op := range ops {
		ds := lat.by[op]
		slices.Sort(ds)
		all = append(all, ds...)
		fmt.Fprintf(&report, "%-10s %7d %8s %8s %8s\n", op, len(ds), pct(ds, .50).Round(100*time.Microsecond),
			pct(ds, .95).Round(100*time.Microsecond), pct(ds, .99).Round(100*time.Microsecond))
	}
	slices.Sort(all)
	fmt.Fprintf(&report, "%-10s %7d %8s %8s %8s\n", "all", len(all), pct(all, .50).Round(100*time.Microsecond),
		pct(all, .95).Round(100*time.Microsecond), pct(all, .99).Round(100*time.Microsecond))
	fmt.Fprintf(&report, "5xx %d, transport errors %d, GraphQL errors %v", fivexx, transport, gqlErrors)
	t.Log("load test\n" + report.String())

	// UNAVAILABLE is the answer a client is told to retry: a transaction
	// that deadlocked after the driver's retry bound (docs/operations.md).
	// A few are tolerated when CI runs other packages' tests beside this
	// one; any other error is a bug.
	unavailable := gqlErrors["UNAVAILABLE"]
	if fivexx+transport > 0 || len(gqlErrors) > 1 || (len(gqlErrors) == 1 && unavailable == 0) || unavailable*100 > requests {
		for _, e := range examples {
			t.Errorf("failed request: %s", e)
		}
		t.Errorf("%d 5xx, %d transport errors, GraphQL errors %v; want none (UNAVAILABLE: at most 1 %%)", fivexx, transport, gqlErrors)
	} else if unavailable > 0 {
		t.Logf("%d requests UNAVAILABLE (retryable), e.g. %v", unavailable, examples)
	}
	if requests < loadClients {
		t.Fatalf("only %d requests in %s", requests, elapsed)
	}
	srv.WaitStatus(t, "/readyz", http.StatusOK, 10*time.Second)
	l.verify(t, srv, sc)
}
