package graph_test

// Benchmarks of retrieve, retrieveGraph and captureMemory through the real
// GraphQL HTTP API over the real Neo4j (docs/BENCHMARKS.md, "Retrieval quality and speed").
//
// They run against a dataset in the scope "bench:retrieval", grown with
// captureMemory (so it has entities, facts and edges) until the store holds
// MEMBRANE_BENCH_RECORDS records (default 10,000) in that scope. The
// dataset is kept between runs; point NEO4J_URI at a Neo4j of your own:
//
//	MEMBRANE_BENCH_RECORDS=100000 NEO4J_URI=bolt://127.0.0.1:47687 go test ./graph/ -run '^$' \
//	  -bench 'Retrieve|CaptureMemory' -benchtime 2000x -count 1 -timeout 60m
//
// Identifiers carry a retr prefix so they cannot clash with other
// benchmark files of the package.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

const retrScope = "bench:retrieval"

// retrCorpus generates the dataset's text: pseudo-words drawn from a Zipf
// distribution (a few very common, most rare), entity names likewise.
type retrCorpus struct {
	words    []string
	entities []string
	tools    []string
}

func newRetrCorpus() *retrCorpus {
	r := rand.New(rand.NewPCG(1, 2))
	syll := []string{"ba", "ko", "ri", "te", "nu", "sa", "vel", "mor", "da", "pi", "lu", "gen", "tor", "fa", "qui", "zo", "ran", "mi", "ex", "dol"}
	seen := map[string]bool{}
	gen := func() string {
		for {
			var sb strings.Builder
			for range 2 + r.IntN(3) {
				sb.WriteString(syll[r.IntN(len(syll))])
			}
			if w := sb.String(); !seen[w] {
				seen[w] = true
				return w
			}
		}
	}
	c := &retrCorpus{}
	for range 5000 {
		c.words = append(c.words, gen())
	}
	// Names need not be unique words: the number makes them unique.
	any2 := func() string { return syll[r.IntN(len(syll))] + syll[r.IntN(len(syll))] }
	for i := range 3000 {
		c.entities = append(c.entities, fmt.Sprintf("%s-%s-%d", any2(), any2(), i))
	}
	for i := range 50 {
		c.tools = append(c.tools, fmt.Sprintf("tool-%s%d", any2(), i))
	}
	return c
}

// zipf draws indexes in [0, n) with a Zipf distribution.
func retrZipf(r *rand.Rand, n int) func() int {
	z := rand.NewZipf(rand.New(rand.NewPCG(r.Uint64(), r.Uint64())), 1.1, 2, uint64(n-1))
	return func() int { return int(z.Uint64()) }
}

// capture returns the content of the i-th generated capture: an observed
// fact (30%), a tool output (20%) or an event (50%), naming one or two
// entities.
func (c *retrCorpus) capture(r *rand.Rand, word, entity func() int, scope string) map[string]any {
	sentence := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = c.words[word()]
		}
		return strings.Join(ws, " ")
	}
	in := map[string]any{"source": "bench-agent", "scope": scope}
	switch p := r.IntN(10); {
	case p < 3:
		in["sourceKind"] = "observation"
		in["content"] = map[string]any{"subject": c.entities[entity()], "predicate": c.words[word()], "object": sentence(4)}
	case p < 5:
		in["sourceKind"] = "tool_output"
		in["content"] = map[string]any{"tool_name": c.tools[r.IntN(len(c.tools))], "result": sentence(12), "service": c.entities[entity()]}
	default:
		in["sourceKind"] = "event"
		in["content"] = map[string]any{"service": c.entities[entity()], "project": c.entities[entity()], "text": sentence(14)}
	}
	return in
}

// query returns a query of 2 or 3 generated words.
func (c *retrCorpus) query(r *rand.Rand, word func() int) string {
	ws := make([]string, 2+r.IntN(2))
	for i := range ws {
		ws[i] = c.words[word()]
	}
	return strings.Join(ws, " ")
}

var retrData struct {
	once   sync.Once
	corpus *retrCorpus
	err    error
}

// retrTarget is the dataset size asked for.
func retrTarget(b *testing.B) int64 {
	n := int64(10_000)
	if v := os.Getenv("MEMBRANE_BENCH_RECORDS"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil {
			b.Fatalf("MEMBRANE_BENCH_RECORDS: %v", err)
		}
	}
	return n
}

// retrDataset grows the dataset to the target size (once per test binary)
// and returns its corpus.
func retrDataset(b *testing.B, c *client) *retrCorpus {
	b.Helper()
	retrData.once.Do(func() {
		retrData.corpus = newRetrCorpus()
		target := retrTarget(b)
		ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("bench"))
		count := func() int64 {
			n, err := c.DB.CountRecords(ctx, membrane.RecordFilter{Scopes: []string{retrScope}})
			if err != nil {
				retrData.err = err
			}
			return n
		}
		start := time.Now()
		have := count()
		for have < target && retrData.err == nil {
			// About 1.7 records per capture.
			todo := int((target-have)*10/17) + 8
			retrData.err = retrCaptures(c, retrData.corpus, retrScope, todo, 8, uint64(have), nil)
			have = count()
			fmt.Fprintf(os.Stderr, "bench dataset: %d records in %s (%s)\n", have, retrScope, time.Since(start).Round(time.Second))
		}
		if retrData.err == nil {
			retrData.err = c.DB.AwaitSearchIndexes(ctx)
		}
	})
	if retrData.err != nil {
		b.Fatal(retrData.err)
	}
	return retrData.corpus
}

// retrCaptures sends n captures from `clients` concurrent clients, the
// generator seeded with seed; durs, when not nil, gets each one's latency.
func retrCaptures(c *client, corpus *retrCorpus, scope string, n, clients int, seed uint64, durs []time.Duration) error {
	var next atomic.Int64
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			word, entity := retrZipf(r, len(corpus.words)), retrZipf(r, len(corpus.entities))
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				body := mustJSON(`mutation($in: CaptureMemoryInput!) { captureMemory(input: $in) { primary { id } created { id } } }`,
					map[string]any{"in": corpus.capture(r, word, entity, scope)})
				start := time.Now()
				err := (&benchClient{url: c.URL, key: c.Key}).post(body, nil)
				if durs != nil {
					durs[i] = time.Since(start)
				}
				if err != nil {
					errs[w] = fmt.Errorf("capture %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// retrStoreSize is how many records the whole store holds.
func retrStoreSize(b *testing.B, c *client) float64 {
	n, err := c.DB.CountRecords(membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("bench")), membrane.RecordFilter{})
	if err != nil {
		b.Fatal(err)
	}
	return float64(n)
}

const (
	retrRetrieveQ = `query($q: String!, $s: [String!]) { retrieve(input: {query: $q, scopes: $s, limit: 10}) {
  hits { score parts { relevance salience recency confidence } record { id type confidence
    payload { __typename ... on SemanticPayload { subject predicate object } ... on EpisodicPayload { timeline { eventKind summary } } ... on EntityPayload { canonicalName } } } }
  selection { confidence needsMore } } }`
	retrGraphQ = `query($q: String!, $s: [String!]) { retrieveGraph(input: {query: $q, scopes: $s, rootLimit: 10, nodeLimit: 25, edgeLimit: 100, maxHops: 1}) {
  nodes { root hop record { id type } } edges { predicate sourceId targetId } truncated } }`
)

// retrQueries runs b.N requests of query from `clients` concurrent
// clients and reports per-request latency; check validates each response.
func retrQueries(b *testing.B, c *client, query string, clients int, check func(data []byte) error) {
	corpus := retrDataset(b, c)
	r := rand.New(rand.NewPCG(42, uint64(clients)))
	word := retrZipf(r, len(corpus.words))
	reqs := make([][]byte, 512)
	for i := range reqs {
		reqs[i] = body(b, query, map[string]any{"q": corpus.query(r, word), "s": []any{retrScope}})
	}
	// Warm the query plans and caches.
	for _, req := range reqs[:16] {
		if err := (&benchClient{url: c.URL, key: c.Key}).post(req, nil); err != nil {
			b.Fatal(err)
		}
	}
	reportOps(b, concurrently(b, clients, func(i int) error {
		var out rawData
		err := (&benchClient{url: c.URL, key: c.Key}).post(reqs[i%len(reqs)], &out)
		if err == nil {
			err = check(out)
		}
		return err
	}))
	b.ReportMetric(retrStoreSize(b, c), "records")
}

// rawData keeps a response's data undecoded.
type rawData []byte

func (d *rawData) UnmarshalJSON(b []byte) error {
	*d = append((*d)[:0], b...)
	return nil
}

// BenchmarkRetrieve: retrieve with a 2-3 word query, limit 10, the hits'
// payloads selected, from 1 or 8 concurrent clients.
func BenchmarkRetrieve(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", clients), func(b *testing.B) {
			c := newProductionClient(b)
			retrQueries(b, c, retrRetrieveQ, clients, func(data []byte) error {
				if !strings.Contains(string(data), `"hits":`) {
					return fmt.Errorf("no hits in %.200s", data)
				}
				return nil
			})
		})
	}
}

// BenchmarkRetrieveGraph: retrieveGraph with 10 roots, 25 nodes, 100
// edges, 1 hop, from 1 or 8 concurrent clients.
func BenchmarkRetrieveGraph(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", clients), func(b *testing.B) {
			c := newProductionClient(b)
			retrQueries(b, c, retrGraphQ, clients, func(data []byte) error {
				if !strings.Contains(string(data), `"nodes":`) {
					return fmt.Errorf("no nodes in %.200s", data)
				}
				return nil
			})
		})
	}
}

// BenchmarkCaptureMemory: b.N captures (the dataset's mix: facts, tool
// outputs, events, each naming one or two entities of a pool of 3,000, so
// most reuse an entity and some create one) from 1 or 8 concurrent
// clients, into the dataset's scope: the store grows by about 1.7 records
// per capture. Reports captures per second and per-capture latency.
func BenchmarkCaptureMemory(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", clients), func(b *testing.B) {
			c := newProductionClient(b)
			corpus := retrDataset(b, c)
			before := retrStoreSize(b, c)
			durs := make([]time.Duration, b.N)
			b.ResetTimer()
			err := retrCaptures(c, corpus, retrScope, b.N, clients, uint64(time.Now().UnixNano()), durs)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			latencies(durs).report(b)
			b.ReportMetric(before, "records")
		})
	}
}
