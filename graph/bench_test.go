package graph_test

// Benchmarks through the real GraphQL HTTP API (httptest server over
// membranehttp.NewHandler and the real Neo4j store). They run only with -bench:
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test -run '^$' -bench 'Ingest|RecordsQuery' ./graph/
//
// See docs/BENCHMARKS.md for the measured figures and how to read them.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/bench"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/neo4jtest"
	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// benchHTTP keeps enough idle connections for the concurrent benchmarks, so
// that they measure requests rather than TCP handshakes.
var benchHTTP = func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 64
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr}
}()

// benchClient posts prepared GraphQL requests. Unlike client it returns
// errors instead of failing, so that it can be used from worker goroutines.
type benchClient struct {
	url, key string
}

func newBenchClient(b *testing.B) *benchClient {
	b.Helper()
	c := newProductionClient(b)
	return &benchClient{url: c.URL, key: c.Key}
}

// newProductionClient is newClient with the server set up as internal/app
// does: it runs the change feed, and every commit wakes its sequencer, so
// benchmarks pay for numbering audit entries.
func newProductionClient(b *testing.B) *client {
	b.Helper()
	setup, hub := gqltest.WithFeed(b)
	c := newClientWith(b, setup)
	c.DB.AfterWrite = (*hub).Poke
	b.Cleanup(func() { c.DB.AfterWrite = nil })
	return c
}

// body marshals a GraphQL request once, outside the timed loop.
func body(b *testing.B, query string, vars map[string]any) []byte {
	b.Helper()
	out, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// post sends a prepared request and decodes its data into out. Any GraphQL
// error, non-200 status or undecodable response is an error.
func (c *benchClient) post(req []byte, out any) error {
	return bench.Post(context.Background(), benchHTTP, c.url+"/graphql", c.key, req, out)
}

// must is post for the benchmark goroutine: it fails the benchmark loudly.
func (c *benchClient) must(b *testing.B, req []byte, out any) {
	b.Helper()
	if err := c.post(req, out); err != nil {
		b.Fatal(err)
	}
}

// latencies collects per-operation durations and reports percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	b.Helper()
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	pct := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1 // nearest rank
		i = max(0, min(i, len(s)-1))
		return float64(s[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// reportRate reports records written per second of benchmark time.
func reportRate(b *testing.B, records int) {
	b.Helper()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(records)/s, "records/s")
	}
}

// benchScope returns a fresh scope for the records a benchmark writes and
// deletes them (and only them) when the benchmark ends, so that repeated
// runs do not grow the shared test database.
func benchScope(b *testing.B) string {
	b.Helper()
	scope := neo4jtest.Scope(b)
	b.Cleanup(func() { deleteScope(b, scope) })
	return scope
}

// deleteScope removes the records of scope and their audit entries, in
// batches. The store has no delete, so this talks to Neo4j directly.
func deleteScope(b *testing.B, scope string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	auth := neo4jdrv.NoAuth()
	if u := os.Getenv("NEO4J_USER"); u != "" {
		auth = neo4jdrv.BasicAuth(u, os.Getenv("NEO4J_PASSWORD"), "")
	}
	drv, err := neo4jdrv.NewDriverWithContext(os.Getenv("NEO4J_URI"), auth)
	if err != nil {
		b.Errorf("cleanup of %s: %v", scope, err)
		return
	}
	defer drv.Close(ctx)
	db := os.Getenv("NEO4J_DATABASE")
	if db == "" {
		db = "neo4j"
	}
	s := drv.NewSession(ctx, neo4jdrv.SessionConfig{DatabaseName: db})
	defer s.Close(ctx)
	for _, stmt := range []string{
		`MATCH (m:Memory {scope: $scope})-[:HAS_AUDIT]->(a:AuditEntry)
		 CALL (a) { DETACH DELETE a } IN TRANSACTIONS OF 5000 ROWS`,
		`MATCH (m:Memory {scope: $scope})
		 CALL (m) { DETACH DELETE m } IN TRANSACTIONS OF 5000 ROWS`,
	} {
		res, err := s.Run(ctx, stmt, map[string]any{"scope": scope})
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if err != nil {
			b.Errorf("cleanup of %s: %v", scope, err)
			return
		}
	}
}

// semanticInput is the i-th record of a benchmark: a semantic fact with
// tags, salience and confidence varying with i (as in query_test.go's seed).
func semanticInput(scope string, i int) map[string]any {
	tags := []any{"all"}
	if i%2 == 0 {
		tags = append(tags, "even")
	}
	if i%5 == 0 {
		tags = append(tags, "five")
	}
	return map[string]any{
		"type": "SEMANTIC", "scope": scope, "tags": tags,
		"sensitivity": []string{"PUBLIC", "LOW", "MEDIUM"}[i%3],
		"salience":    float64(i%4) / 2, "confidence": float64(i%7) / 10,
		"payload": map[string]any{"semantic": map[string]any{
			"subject":   fmt.Sprintf("service-%d", i),
			"predicate": "depends_on",
			"object":    map[string]any{"name": fmt.Sprintf("database-%d", i%97), "port": 5432 + i%10},
			"evidence":  []any{map[string]any{"sourceType": "observation", "sourceId": fmt.Sprintf("obs-%d", i)}},
		}},
	}
}

const createRecordMutation = `mutation($in: RecordInput!) { createRecord(input: $in, actor: "bench") { id } }`

// BenchmarkIngestSingle writes one record per mutation: createRecord and
// ingestObservation from one client, and createRecord from 8 concurrent
// clients.
func BenchmarkIngestSingle(b *testing.B) {
	b.Run("createRecord", func(b *testing.B) {
		c := newBenchClient(b)
		timedWrite(b, c, "createRecord", body(b, createRecordMutation, map[string]any{"in": semanticInput(benchScope(b), 1)}))
	})
	b.Run("ingestObservation", func(b *testing.B) {
		c := newBenchClient(b)
		timedWrite(b, c, "ingestObservation", body(b, `mutation($s: String) { ingestObservation(input: {source: "bench-agent", subject: "auth-service",
		  predicate: "uses", object: {db: "PostgreSQL", version: 16}, tags: ["infra", "db"], scope: $s}) { id } }`,
			map[string]any{"s": benchScope(b)}))
	})
	b.Run("createRecord-8clients", func(b *testing.B) {
		c := newBenchClient(b)
		req := body(b, createRecordMutation, map[string]any{"in": semanticInput(benchScope(b), 1)})
		c.must(b, req, nil)
		lat := concurrently(b, 8, func(int) error {
			var got struct{ CreateRecord struct{ ID string } }
			if err := c.post(req, &got); err != nil {
				return err
			}
			if got.CreateRecord.ID == "" {
				return fmt.Errorf("createRecord returned no id")
			}
			return nil
		})
		reportRate(b, b.N)
		lat.report(b)
	})
}

// concurrently runs op b.N times in total from clients goroutines, op i
// (0 to b.N-1) once, and returns the duration of every op. The first
// error fails the benchmark once all goroutines have stopped.
func concurrently(b *testing.B, clients int, op func(i int) error) latencies {
	b.Helper()
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		first  error
		all    latencies
		wg     sync.WaitGroup
	)
	b.ResetTimer()
	for range clients {
		wg.Go(func() {
			var lat latencies
			defer func() {
				mu.Lock()
				all = append(all, lat...)
				mu.Unlock()
			}()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				start := time.Now()
				if err := op(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
				lat = append(lat, time.Since(start))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if first != nil {
		b.Fatal(first)
	}
	return all
}

// BenchmarkIngestBatch writes semantic records with ingestBatch, 1,000 and
// 5,000 per mutation (one transaction each), from one client and, to see
// whether the server overlaps its Go work with Neo4j's, from two. The
// target is 10,000 records/s.
func BenchmarkIngestBatch(b *testing.B) {
	const mutation = `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in, actor: "bench") { id } }`
	// prepare returns an op that sends one batch of size records in a new
	// scope and checks the answer. The request is marshalled once and is
	// the same every time: the server gives each record a new id.
	prepare := func(b *testing.B, size int) func() error {
		c := newBenchClient(b)
		scope := benchScope(b)
		in := make([]any, size)
		for i := range in {
			in[i] = semanticInput(scope, i)
		}
		req := body(b, mutation, map[string]any{"in": in})
		b.SetBytes(int64(len(req)))
		op := func() error {
			var got struct{ IngestBatch []struct{ ID string } }
			if err := c.post(req, &got); err != nil {
				return err
			}
			if len(got.IngestBatch) != size {
				return fmt.Errorf("ingestBatch returned %d records, want %d", len(got.IngestBatch), size)
			}
			return nil
		}
		if err := op(); err != nil { // warm-up
			b.Fatal(err)
		}
		return op
	}
	for _, size := range []int{1000, 5000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			op := prepare(b, size)
			var lat latencies
			n := 0
			for b.Loop() {
				start := time.Now()
				if err := op(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				n += size
			}
			reportRate(b, n)
			lat.report(b)
		})
	}
	b.Run("1000-2clients", func(b *testing.B) {
		op := prepare(b, 1000)
		lat := concurrently(b, 2, func(int) error { return op() })
		reportRate(b, b.N*1000)
		lat.report(b)
	})
}

// The records query benchmarks read a fixed scope of 10,000 semantic
// records, seeded once and reused by later runs.
const (
	recordsScope = "bench:records-10k"
	recordsN     = 10_000
)

// seedRecords makes sure recordsScope holds its 10,000 records. They are
// written one createRecord at a time, as agents write, so that each has its
// own createdAt (one ingestBatch would give all 10,000 the same one). Their
// ids are fixed: an interrupted or concurrent seed resumes where it stopped
// (CONFLICT means the record is already there) and never doubles them.
func seedRecords(b *testing.B, c *client) {
	b.Helper()
	n := c.Count(recordsScope)
	if n == recordsN {
		return
	}
	if n > recordsN {
		b.Fatalf("scope %s holds %d records, want %d: it is not only this benchmark's seed", recordsScope, n, recordsN)
	}
	b.Logf("seeding %s: %d of %d records present", recordsScope, n, recordsN)
	for i := range recordsN {
		in := semanticInput(recordsScope, i)
		in["id"] = fmt.Sprintf("%s:%05d", recordsScope, i)
		resp := c.Raw(createRecordMutation, map[string]any{"in": in})
		if len(resp.Errors) > 0 && resp.Errors[0].Extensions["code"] != "CONFLICT" {
			b.Fatalf("seed %s record %d: %+v", recordsScope, i, resp.Errors)
		}
	}
	if n := c.Count(recordsScope); n != recordsN {
		b.Fatalf("scope %s holds %d records after seeding, want %d", recordsScope, n, recordsN)
	}
}

const recordsPageQuery = `query($f: RecordFilter, $o: RecordOrder, $after: String) {
  records(filter: $f, orderBy: $o, first: 20, after: $after) {
    nodes {
      id type sensitivity confidence salience scope tags createdAt status version
      payload { ... on SemanticPayload { subject predicate object } }
    }
    pageInfo { hasNextPage endCursor }
  }
}`

type recordsPage struct {
	Records struct {
		Nodes []struct {
			ID       string
			Salience float64
			Tags     []string
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
}

// BenchmarkRecordsQuery measures one page of 20 records out of a scope of
// 10,000: by scope alone (newest first), with tags and minSalience, ordered
// by salience, and the third page reached through cursors; and, for scale,
// a scope that matches nothing.
func BenchmarkRecordsQuery(b *testing.B) {
	c := newProductionClient(b)
	seedRecords(b, c)
	bc := &benchClient{url: c.URL, key: c.Key}
	scopes := []any{recordsScope}

	// full checks that a page is full and not the last.
	full := func(p *recordsPage) error {
		if len(p.Records.Nodes) != 20 || !p.Records.PageInfo.HasNextPage {
			return fmt.Errorf("page has %d nodes, hasNextPage %v; want 20 and true", len(p.Records.Nodes), p.Records.PageInfo.HasNextPage)
		}
		return nil
	}
	// run measures one query; check validates every answer.
	run := func(b *testing.B, vars map[string]any, check func(*recordsPage) error) {
		req := body(b, recordsPageQuery, vars)
		var p recordsPage
		bc.must(b, req, &p) // warm-up: plan cache
		var lat latencies
		for b.Loop() {
			start := time.Now()
			p = recordsPage{}
			bc.must(b, req, &p)
			lat = append(lat, time.Since(start))
			if err := check(&p); err != nil {
				b.Fatal(err)
			}
		}
		lat.report(b)
	}
	// and checks a full page, then whatever else extra checks.
	and := func(extra func(*recordsPage) error) func(*recordsPage) error {
		return func(p *recordsPage) error {
			if err := full(p); err != nil {
				return err
			}
			return extra(p)
		}
	}

	b.Run("scope", func(b *testing.B) {
		run(b, map[string]any{"f": map[string]any{"scopes": scopes}}, full)
	})
	b.Run("tags+minSalience", func(b *testing.B) {
		// 2,500 of the 10,000 records match.
		run(b, map[string]any{"f": map[string]any{"scopes": scopes, "tags": []any{"even"}, "minSalience": 1.0}},
			and(func(p *recordsPage) error {
				for _, n := range p.Records.Nodes {
					if n.Salience < 1 || !slices.Contains(n.Tags, "even") {
						return fmt.Errorf("record %s (salience %v, tags %v) does not match the filter", n.ID, n.Salience, n.Tags)
					}
				}
				return nil
			}))
	})
	b.Run("orderBy=SALIENCE", func(b *testing.B) {
		run(b, map[string]any{"f": map[string]any{"scopes": scopes}, "o": map[string]any{"field": "SALIENCE", "direction": "DESC"}},
			and(func(p *recordsPage) error {
				for i := 1; i < len(p.Records.Nodes); i++ {
					if p.Records.Nodes[i-1].Salience < p.Records.Nodes[i].Salience {
						return fmt.Errorf("not ordered by salience at %d", i)
					}
				}
				return nil
			}))
	})
	b.Run("page3-cursor", func(b *testing.B) {
		// Walk to the cursor that ends page 2 once; each op fetches page 3.
		f := map[string]any{"scopes": scopes}
		seen := map[string]bool{}
		var after any
		for range 2 {
			var p recordsPage
			bc.must(b, body(b, recordsPageQuery, map[string]any{"f": f, "after": after}), &p)
			if err := full(&p); err != nil {
				b.Fatal(err)
			}
			for _, n := range p.Records.Nodes {
				seen[n.ID] = true
			}
			after = *p.Records.PageInfo.EndCursor
		}
		run(b, map[string]any{"f": f, "after": after}, and(func(p *recordsPage) error {
			for _, n := range p.Records.Nodes {
				if seen[n.ID] {
					return fmt.Errorf("page 3 repeats record %s of pages 1-2", n.ID)
				}
			}
			return nil
		}))
	})
	b.Run("text=rare", func(b *testing.B) {
		// One record of the scope has the word: the full-text match is the
		// set, and the page is that record.
		run(b, map[string]any{"f": map[string]any{"scopes": scopes, "text": "4242"}}, func(p *recordsPage) error {
			if len(p.Records.Nodes) != 1 || p.Records.Nodes[0].ID != recordsScope+":04242" {
				return fmt.Errorf("page %+v, want only record 4242", p.Records.Nodes)
			}
			return nil
		})
	})
	b.Run("text=every", func(b *testing.B) {
		// Every record of the scope matches: the text filter's worst case,
		// all 10,000 matches read and ordered for a page of 20.
		run(b, map[string]any{"f": map[string]any{"scopes": scopes, "text": "depends_on"}}, full)
	})
	b.Run("no-match", func(b *testing.B) {
		// A scope with no records: the worst case, as the filter cannot use
		// the scope index and the query walks the whole createdAt index.
		run(b, map[string]any{"f": map[string]any{"scopes": []any{recordsScope + ":none"}}}, func(p *recordsPage) error {
			if len(p.Records.Nodes) != 0 || p.Records.PageInfo.HasNextPage {
				return fmt.Errorf("page has %d nodes, want none", len(p.Records.Nodes))
			}
			return nil
		})
	})
}

// BenchmarkPointRead reads one record by id per query, as cmd/bench's
// point read does (id, type, version, confidence, salience), from one
// client. With -cpuprofile it shows where the Go side of a point read
// spends its time (docs/BENCHMARKS.md, "Served latency").
func BenchmarkPointRead(b *testing.B) {
	c := newBenchClient(b)
	var created struct{ CreateRecord struct{ ID string } }
	c.must(b, body(b, createRecordMutation, map[string]any{"in": semanticInput(benchScope(b), 1)}), &created)
	req := body(b, `query($id: ID!) { record(id: $id) { id type version confidence salience } }`, map[string]any{"id": created.CreateRecord.ID})
	var got struct{ Record struct{ ID string } }
	c.must(b, req, &got) // warm-up: plan cache, connections
	timed(b, func() {
		got.Record.ID = ""
		c.must(b, req, &got)
		if got.Record.ID != created.CreateRecord.ID {
			b.Fatalf("record(id) = %q, want %q", got.Record.ID, created.CreateRecord.ID)
		}
	})
}

// timed runs op once per benchmark iteration (b.Loop) and reports the
// rate and the latency percentiles of the calls (the checks op makes on
// its answer are timed with it: they cost nanoseconds).
func timed(b *testing.B, op func()) {
	var lat latencies
	n := 0
	for b.Loop() {
		start := time.Now()
		op()
		lat = append(lat, time.Since(start))
		n++
	}
	reportRate(b, n)
	lat.report(b)
}

// timedWrite times req, a mutation whose root field (named field) answers
// a new record's id, from one client after an untimed warm-up (plan
// cache, connections); an answer without an id fails the benchmark.
func timedWrite(b *testing.B, c *benchClient, field string, req []byte) {
	var got map[string]struct{ ID string }
	c.must(b, req, &got)
	timed(b, func() {
		clear(got)
		c.must(b, req, &got)
		if got[field].ID == "" {
			b.Fatalf("%s returned no id", field)
		}
	})
}
