package bench

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

// Config says what to run.
type Config struct {
	// Ops is the number of timed operations of each workload (each
	// client runs its share).
	Ops int
	// Records is the size of the corpus that ingestBatch writes (in
	// batches of 1,000) and retrieve and retrieveGraph then search: 100,000
	// for docs/BENCHMARKS.md's figures at 100k.
	Records int
	// Only, when set, runs the workloads whose names it matches (the
	// corpus is written whenever a retrieval workload runs).
	Only *regexp.Regexp
	// Scope is the scope every record is written to (a fresh one per run,
	// so that captures create their entities, as on a fresh store).
	Scope string
	// Corpus, when set, is the scope of a corpus an earlier run wrote
	// (and embedded): retrieval searches it, and no corpus is written.
	Corpus string
	// ColdOps is the number of point reads of the cold workload, which runs
	// first and without a warm-up: against a server just started on a
	// fresh Neo4j they are its first requests (plans not cached, the JIT
	// cold), which is what a user's first minute sees. 0 leaves it out.
	ColdOps int
}

// Workload is one measured operation against a client of type C (a
// GraphQL *Client for this server; another system's client for a side by
// side), run by Clients clients at once.
type Workload[C any] struct {
	Name    string
	Clients int
	// Items is what one operation writes (records per ingestBatch), for
	// throughput; 0 means one operation.
	Items int
	Unit  string
	// Searches is true for the workloads that search the corpus the bulk
	// ingest writes.
	Searches bool
	// Cold workloads run Config.ColdOps operations with no warm-up.
	Cold bool
	// Prepare runs untimed before the workload and returns its operation
	// for the i-th of n operations (i counts across clients; the first
	// ones are Run's untimed warm-up).
	Prepare func(ctx context.Context, c C, cfg Config, n int) (func(ctx context.Context, i int) error, error)
	// After, when set, runs once the workload is measured and before the
	// next, and may report a row of its own (the embed job after the bulk
	// ingest that writes the corpus).
	After func(ctx context.Context, c C) (Summary, error)
}

// Run runs the workloads of cfg against c in order and returns their
// summaries. A workload whose preparation fails is reported with every
// operation failed and the error returned at the end.
func Run(ctx context.Context, c *Client, cfg Config, progress func(Summary)) ([]Summary, error) {
	return RunOn(ctx, c, Workloads(), cfg, progress)
}

// RunOn runs the workloads ws of cfg against c in order, as Run does.
func RunOn[C any](ctx context.Context, c C, ws []Workload[C], cfg Config, progress func(Summary)) ([]Summary, error) {
	var sums []Summary
	var firstErr error
	// Retrieval searches the corpus that the bulk ingest writes, or one
	// an earlier run wrote.
	corpus := cfg.Only == nil
	for _, w := range ws {
		corpus = corpus || (w.Searches && cfg.Only.MatchString(w.Name))
	}
	if cfg.Corpus != "" {
		corpus = false
	}
	for _, w := range ws {
		if cfg.Only != nil && !cfg.Only.MatchString(w.Name) && !(w.Items > 0 && corpus) || w.Cold && cfg.ColdOps < 1 ||
			w.Items > 0 && cfg.Corpus != "" {
			continue
		}
		wcfg := cfg
		if w.Searches && cfg.Corpus != "" {
			wcfg.Scope = cfg.Corpus
		}
		// A warm-up of untimed operations first (plans cached,
		// connections open, the JIT warm), except for the bulk ingest,
		// whose every operation writes part of the corpus.
		n, warm := cfg.Ops, min(max(cfg.Ops/10, 1), 20)
		switch {
		case w.Items > 0:
			n, warm = max(cfg.Records/w.Items, 1), 0
		case w.Cold:
			n, warm = cfg.ColdOps, 0
		}
		op, err := w.Prepare(ctx, c, wcfg, warm+n)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", w.Name, err)
			}
			s := Summarize(w.Name, w.Clients, nil, n, 0, w.Items, w.Unit)
			s.Err = err
			sums = append(sums, s)
			progress(s)
			continue
		}
		for i := range warm {
			if err := op(ctx, i); err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s: warm-up: %w", w.Name, err)
			}
		}
		s := measure(ctx, w, n, func(ctx context.Context, i int) error { return op(ctx, warm+i) })
		sums = append(sums, s)
		progress(s)
		if w.After != nil && corpus {
			s, err := w.After(ctx, c)
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", s.Name, err)
			}
			if s.Name != "" {
				sums = append(sums, s)
				progress(s)
			}
		}
	}
	return sums, firstErr
}

// embedCorpus gives the corpus its vectors before it is searched, when the
// server has vector search: a server writes the vectors of new records in
// the background, and of a bulk ingest faster than the model it queues
// 10,000 and leaves the rest to the embed job, which runs every ten
// minutes. Searching at once measured a corpus mostly without vectors,
// beside a busy model: not the store a user searches once it has settled.
// It runs the embed job (runJob, admin) until a run succeeds (CONFLICT
// while the start-up run is under way) and reports it as a row: the job's
// time and the records it embedded per second. No row without vector
// search.
func embedCorpus(ctx context.Context, c *Client) (Summary, error) {
	var probe struct{ Retrieve struct{ VectorUsed bool } }
	if err := c.Do(ctx, `query { retrieve(input: {query: "probe", limit: 1}) { vectorUsed } }`, nil, &probe); err != nil {
		return Summary{Name: "embed job"}, err
	}
	if !probe.Retrieve.VectorUsed {
		return Summary{}, nil
	}
	const name = "embed job (the corpus's vectors)"
	wait := time.NewTicker(time.Second)
	defer wait.Stop()
	for {
		var out struct {
			RunJob struct {
				Outcome string
				Changed int
				Error   *string
			}
		}
		start := time.Now()
		err := c.Do(ctx, `mutation { runJob(job: EMBED) { outcome changed error } }`, nil, &out)
		var ge GraphQLError
		if errors.As(err, &ge) && ge.Extensions["code"] == "CONFLICT" {
			select {
			case <-ctx.Done():
				return Summarize(name, 1, nil, 1, 0, 0, "records"), ctx.Err()
			case <-wait.C:
				continue
			}
		}
		took := time.Since(start)
		switch {
		case err != nil:
			return Summarize(name, 1, nil, 1, 0, 0, "records"), err
		case out.RunJob.Outcome != "SUCCEEDED":
			msg := ""
			if out.RunJob.Error != nil {
				msg = *out.RunJob.Error
			}
			return Summarize(name, 1, nil, 1, 0, 0, "records"), fmt.Errorf("the embed job ended %s: %s", out.RunJob.Outcome, msg)
		}
		s := Summarize(name, 1, []time.Duration{took}, 0, took, out.RunJob.Changed, "records")
		if out.RunJob.Changed == 0 {
			s.PerSecond = 0
		}
		return s, nil
	}
}

// measure runs n operations of w on w.Clients goroutines, which take the
// next index from a shared counter.
func measure[C any](ctx context.Context, w Workload[C], n int, op func(context.Context, int) error) Summary {
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	errors := 0
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range max(w.Clients, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			failed := 0
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					break
				}
				t := time.Now()
				if err := op(ctx, i); err != nil {
					failed++
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat, errors = append(lat, mine...), errors+failed
			mu.Unlock()
		}()
	}
	wg.Wait()
	s := Summarize(w.Name, w.Clients, lat, errors, time.Since(start), w.Items, w.Unit)
	s.Err = firstErr
	return s
}

// GraphQL operations of the workloads.
const (
	createQ    = `mutation($in: RecordInput!) { createRecord(input: $in, actor: "bench") { id } }`
	batchQ     = `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in, actor: "bench") { id } }`
	readQ      = `query($id: ID!) { record(id: $id) { id type version confidence salience } }`
	contestQ   = `mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref, actor: "bench") { id version } }`
	forkQ      = `mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, actor: "bench") { id } }`
	supersedeQ = `mutation($id: ID!, $in: RecordInput!) { supersede(oldId: $id, newRecord: $in, actor: "bench") { id } }`
	lineageQ   = `query($id: ID!) { lineage(id: $id, direction: ANCESTORS, maxDepth: 100, limit: 200) { nodes { record { id } depth } truncated } }`
	captureQ   = `mutation($in: CaptureMemoryInput!) { captureMemory(input: $in) { primary { id } created { id } } }`
	retrieveQ  = `query($in: RetrieveInput!) { retrieve(input: $in) { hits { score record { id } } } }`
	graphQ     = `query($in: RetrieveGraphInput!) { retrieveGraph(input: $in) { nodes { record { id } hop } edges { predicate } } }`
	recordsQ   = `query($f: RecordFilter, $after: String) { records(filter: $f, first: 20, after: $after) { nodes { id type createdAt } pageInfo { hasNextPage endCursor } } }`
)

// fact is a semantic record input of scope about subject (with the
// evidence supersede asks of semantic records).
func fact(scope, subject string) map[string]any {
	return map[string]any{"type": "SEMANTIC", "scope": scope, "payload": map[string]any{"semantic": map[string]any{
		"subject": subject, "predicate": "runs_on", "object": "node " + subject,
		"evidence": []any{map[string]any{"sourceType": "bench", "sourceId": "bench"}}}}}
}

// corpusText is the summary of the i-th record of the retrieval corpus:
// a few words from a small vocabulary, so that queries match many records
// with different scores, as real memory does.
func corpusText(i int) string {
	words := []string{"postgres", "connection", "pool", "deploy", "rollback", "kafka", "lag", "invoice", "billing",
		"token", "refresh", "cache", "timeout", "retry", "index", "search", "backup", "certificate", "release", "incident"}
	return fmt.Sprintf("%s %s %s after the %s of service-%d", words[i%len(words)], words[(i/3)%len(words)],
		words[(i/7)%len(words)], words[(i/11)%len(words)], i%97)
}

// episode is an episodic record input of scope whose event summary is text.
func episode(scope, text string, i int) map[string]any {
	return map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{
		"timeline": []any{map[string]any{"t": time.Now().UTC().Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano),
			"eventKind": "observation", "ref": fmt.Sprint("bench-", i), "summary": text}}}}}
}

type idOut struct{ ID string }

// createFacts creates n facts in cfg.Scope and returns their ids.
func createFacts(ctx context.Context, c *Client, cfg Config, prefix string, n int) ([]string, error) {
	ids := make([]string, 0, n)
	for len(ids) < n {
		in := make([]any, min(1000, n-len(ids)))
		for i := range in {
			in[i] = fact(cfg.Scope, fmt.Sprint(prefix, len(ids)+i))
		}
		var out struct{ IngestBatch []idOut }
		if err := c.Do(ctx, batchQ, map[string]any{"in": in}, &out); err != nil {
			return nil, err
		}
		for _, r := range out.IngestBatch {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// Workloads are the workloads in the order they run: reads first (over
// a store that the writes after them have not grown yet), then
// revisions, captures, the bulk ingest that writes the retrieval corpus,
// and retrieval over it.
func Workloads() []Workload[*Client] {
	pointRead := func(ctx context.Context, c *Client, cfg Config, n int) (func(context.Context, int) error, error) {
		var out struct{ CreateRecord idOut }
		if err := c.Do(ctx, createQ, map[string]any{"in": fact(cfg.Scope, "read")}, &out); err != nil {
			return nil, err
		}
		vars := map[string]any{"id": out.CreateRecord.ID}
		return func(ctx context.Context, _ int) error { return c.Do(ctx, readQ, vars, nil) }, nil
	}
	// Each revision revises a distinct active record of a pool written
	// before the timer starts, so that no two operations conflict.
	revise := func(query, prefix string, vars func(id string, cfg Config, i int) map[string]any) func(context.Context, *Client, Config, int) (func(context.Context, int) error, error) {
		return func(ctx context.Context, c *Client, cfg Config, n int) (func(context.Context, int) error, error) {
			pool, err := createFacts(ctx, c, cfg, prefix, n)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, i int) error { return c.Do(ctx, query, vars(pool[i], cfg, i), nil) }, nil
		}
	}
	contest := revise(contestQ, "contested-", func(id string, _ Config, i int) map[string]any {
		return map[string]any{"id": id, "ref": fmt.Sprint("ticket-", i)}
	})
	fork := revise(forkQ, "forked-", func(id string, cfg Config, i int) map[string]any {
		return map[string]any{"id": id, "in": fact(cfg.Scope, fmt.Sprint("fork-", i))}
	})
	supersede := revise(supersedeQ, "superseded-", func(id string, cfg Config, i int) map[string]any {
		return map[string]any{"id": id, "in": fact(cfg.Scope, fmt.Sprint("successor-", i))}
	})
	// A chain: each supersede revises the head the one before wrote.
	chain := func(ctx context.Context, c *Client, cfg Config, n int) (func(context.Context, int) error, error) {
		var out struct{ CreateRecord idOut }
		if err := c.Do(ctx, createQ, map[string]any{"in": fact(cfg.Scope, "chain")}, &out); err != nil {
			return nil, err
		}
		head := out.CreateRecord.ID
		return func(ctx context.Context, i int) error {
			var next struct{ Supersede idOut }
			if err := c.Do(ctx, supersedeQ, map[string]any{"id": head, "in": fact(cfg.Scope, fmt.Sprint("chain-", i))}, &next); err != nil {
				return err
			}
			head = next.Supersede.ID
			return nil
		}, nil
	}
	lineage := func(ctx context.Context, c *Client, cfg Config, _ int) (func(context.Context, int) error, error) {
		var out struct{ CreateRecord idOut }
		if err := c.Do(ctx, createQ, map[string]any{"in": fact(cfg.Scope, "deep")}, &out); err != nil {
			return nil, err
		}
		head := out.CreateRecord.ID
		for i := range 100 {
			var next struct{ Supersede idOut }
			if err := c.Do(ctx, supersedeQ, map[string]any{"id": head, "in": fact(cfg.Scope, fmt.Sprint("deep-", i))}, &next); err != nil {
				return nil, err
			}
			head = next.Supersede.ID
		}
		vars := map[string]any{"id": head}
		return func(ctx context.Context, _ int) error {
			var l struct{ Lineage struct{ Nodes []any } }
			if err := c.Do(ctx, lineageQ, vars, &l); err != nil {
				return err
			}
			if len(l.Lineage.Nodes) != 101 {
				return fmt.Errorf("lineage of %d records, want 101", len(l.Lineage.Nodes))
			}
			return nil
		}, nil
	}
	// Every capture names a project of its own: an entity is created, as
	// captures on a fresh store do.
	capture := func(ctx context.Context, c *Client, cfg Config, _ int) (func(context.Context, int) error, error) {
		run := time.Now().UnixNano()
		return func(ctx context.Context, i int) error {
			return c.Do(ctx, captureQ, map[string]any{"in": map[string]any{"source": "bench", "scope": cfg.Scope,
				"content": map[string]any{"project": map[string]any{"name": fmt.Sprintf("project-%d-%d", run, i)}, "note": corpusText(i)}}}, nil)
		}, nil
	}
	ingest := func(_ context.Context, c *Client, cfg Config, _ int) (func(context.Context, int) error, error) {
		return func(ctx context.Context, i int) error {
			in := make([]any, 1000)
			for j := range in {
				k := i*1000 + j
				in[j] = episode(cfg.Scope, corpusText(k), k)
			}
			var out struct{ IngestBatch []idOut }
			if err := c.Do(ctx, batchQ, map[string]any{"in": in}, &out); err != nil {
				return err
			}
			if len(out.IngestBatch) != len(in) {
				return fmt.Errorf("ingestBatch wrote %d records, want %d", len(out.IngestBatch), len(in))
			}
			return nil
		}, nil
	}
	queries := []string{"postgres connection pool", "deploy rollback", "kafka lag", "billing invoice", "token refresh timeout",
		"search index backup", "certificate release incident", "cache retry"}
	retrieve := func(query string, limit int) func(context.Context, *Client, Config, int) (func(context.Context, int) error, error) {
		return func(_ context.Context, c *Client, cfg Config, _ int) (func(context.Context, int) error, error) {
			return func(ctx context.Context, i int) error {
				in := map[string]any{"query": queries[i%len(queries)], "scopes": []any{cfg.Scope}}
				if query == graphQ {
					in["rootLimit"] = limit
				} else {
					in["limit"] = limit
				}
				return c.Do(ctx, query, map[string]any{"in": in}, nil)
			}, nil
		}
	}
	// A dashboard's listing of the corpus's scope, newest first: the
	// first page, or (every other operation) the page after it.
	records := func(ctx context.Context, c *Client, cfg Config, _ int) (func(context.Context, int) error, error) {
		f := map[string]any{"scopes": []any{cfg.Scope}}
		var first struct {
			Records struct {
				Nodes    []struct{ ID string }
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		if err := c.Do(ctx, recordsQ, map[string]any{"f": f}, &first); err != nil {
			return nil, err
		}
		if len(first.Records.Nodes) != 20 || !first.Records.PageInfo.HasNextPage || first.Records.PageInfo.EndCursor == nil {
			return nil, fmt.Errorf("the first page has %d records (next page %v), want 20 and more", len(first.Records.Nodes), first.Records.PageInfo.HasNextPage)
		}
		after := *first.Records.PageInfo.EndCursor
		return func(ctx context.Context, i int) error {
			vars := map[string]any{"f": f}
			if i%2 == 1 {
				vars["after"] = after
			}
			return c.Do(ctx, recordsQ, vars, nil)
		}, nil
	}
	return []Workload[*Client]{
		{Name: "point read, cold", Clients: 1, Cold: true, Prepare: pointRead},
		{Name: "point read", Clients: 1, Prepare: pointRead},
		{Name: "point read", Clients: 8, Prepare: pointRead},
		{Name: "contest", Clients: 1, Prepare: contest},
		{Name: "fork", Clients: 1, Prepare: fork},
		{Name: "supersede chain", Clients: 1, Prepare: chain},
		{Name: "supersede", Clients: 8, Prepare: supersede},
		{Name: "lineage 100-deep", Clients: 1, Prepare: lineage},
		{Name: "captureMemory", Clients: 1, Prepare: capture},
		{Name: "captureMemory", Clients: 8, Prepare: capture},
		{Name: "ingestBatch 1,000", Clients: 1, Items: 1000, Unit: "records", Prepare: ingest, After: embedCorpus},
		{Name: "retrieve top-20", Clients: 1, Searches: true, Prepare: retrieve(retrieveQ, 20)},
		{Name: "retrieve top-20", Clients: 8, Searches: true, Prepare: retrieve(retrieveQ, 20)},
		{Name: "retrieveGraph top-20", Clients: 1, Searches: true, Prepare: retrieve(graphQ, 20)},
		{Name: "records page", Clients: 1, Searches: true, Prepare: records},
	}
}
