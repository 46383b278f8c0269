package jobs_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// The benchmarks write up to a million records, so they never run against
// the shared test database: they need MEMBRANE_BENCH_NEO4J_URI, a Neo4j of
// their own (docs/BENCHMARKS.md, "Jobs", has the commands). Data sets are kept
// in fixed scopes between runs and loaded only when missing.

var (
	// sweeps numbers the instants benchmarks sweep at, across iterations
	// and runs of the benchmark function, so that every sweep is at a new
	// instant and writes every record (a sweep at an instant already swept
	// writes nothing).
	sweeps    atomic.Int64
	benchOnce sync.Once
	benchDB   *neo4j.DB
	benchErr  error
)

func benchStore(b *testing.B) *neo4j.DB {
	b.Helper()
	uri := os.Getenv("MEMBRANE_BENCH_NEO4J_URI")
	if uri == "" {
		b.Skip("MEMBRANE_BENCH_NEO4J_URI is not set: these benchmarks need a Neo4j of their own (docs/BENCHMARKS.md, Jobs)")
	}
	benchOnce.Do(func() {
		ctx, cancel := context.WithTimeout(sysCtx(), 2*time.Minute)
		defer cancel()
		benchDB, benchErr = neo4j.Open(ctx, neo4j.Config{URI: uri, Database: "neo4j", MaxPoolSize: 20, TxTimeout: 10 * time.Minute})
		if benchErr == nil {
			benchErr = benchDB.Start(ctx, true)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDB
}

// load makes sure scope holds n records built by build, writing missing
// data in transactions of 10,000 records.
func load(b *testing.B, db *neo4j.DB, scope string, n int, build func(i int) membrane.RecordInput) {
	b.Helper()
	ctx := sysCtx()
	have, err := db.CountRecords(ctx, membrane.RecordFilter{Scopes: []string{scope}})
	if err != nil {
		b.Fatal(err)
	}
	if have == int64(n) {
		return
	}
	if have != 0 {
		b.Fatalf("scope %s holds %d records, not 0 or %d: use a fresh benchmark database", scope, have, n)
	}
	start := time.Now()
	p := membrane.DefaultPolicy()
	const chunk = 10_000
	for lo := 0; lo < n; lo += chunk {
		batch := make([]*membrane.Ingested, 0, chunk)
		for i := lo; i < min(lo+chunk, n); i++ {
			r, err := p.BuildRecord(build(i), t0)
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "bench", "", t0)})
		}
		if _, err := db.CreateRecords(ctx, nil, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("loaded %d records into %s in %v", n, scope, time.Since(start).Round(time.Millisecond))
}

func decayRecord(scope string) func(int) membrane.RecordInput {
	return func(i int) membrane.RecordInput {
		return membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope,
			Lifecycle: &membrane.LifecycleInput{HalfLifeSeconds: new(int64(3600 + i%7200))},
			Payload:   membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "service-" + fmt.Sprint(i%5000), Predicate: "uses", Object: i}}}
	}
}

// benchSweep times decay sweeps over n records; each iteration sweeps a
// later instant, so every record's salience moves and is written.
func benchSweep(b *testing.B, n int, scoped bool) {
	db := benchStore(b)
	scope := fmt.Sprintf("bench:decay:%d", n)
	load(b, db, scope, n, decayRecord(scope))
	o := membrane.SweepOptions{}
	if scoped {
		o.Scopes = []string{scope}
	}
	b.ResetTimer()
	var changed, scanned int64
	for i := 0; i < b.N; i++ {
		o.Now = t0.Add(time.Duration(sweeps.Add(1)) * 7 * time.Minute)
		res, err := db.DecaySweep(sysCtx(), o)
		if err != nil {
			b.Fatal(err)
		}
		scanned, changed = scanned+res.Scanned, changed+res.Changed
	}
	b.StopTimer()
	s := b.Elapsed().Seconds()
	b.ReportMetric(s/float64(b.N), "s/sweep")
	b.ReportMetric(float64(changed)/s, "writes/s")
	b.ReportMetric(float64(scanned)/float64(b.N), "records/sweep")
}

// BenchmarkDecaySweep sweeps the records of one scope (an index seek, as a
// scoped job does).
func BenchmarkDecaySweep(b *testing.B) {
	b.Run("100k", func(b *testing.B) { benchSweep(b, 100_000, true) })
	b.Run("1M", func(b *testing.B) { benchSweep(b, 1_000_000, true) })
}

// BenchmarkDecaySweepAll sweeps every record of the benchmark database, as
// the production job does (a label scan); run it after BenchmarkDecaySweep
// has loaded its data.
func BenchmarkDecaySweepAll(b *testing.B) {
	db := benchStore(b)
	b.ResetTimer()
	var scanned int64
	for i := 0; i < b.N; i++ {
		res, err := db.DecaySweep(sysCtx(), membrane.SweepOptions{Now: t0.Add(time.Duration(sweeps.Add(1)) * 7 * time.Minute)})
		if err != nil {
			b.Fatal(err)
		}
		scanned += res.Scanned
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
	b.ReportMetric(float64(scanned)/float64(b.N), "records/sweep")
}

// BenchmarkPrune times a prune pass over the 1M records of
// BenchmarkDecaySweep at an instant where none is prunable yet: the cost
// of checking every record.
func BenchmarkPrune(b *testing.B) {
	db := benchStore(b)
	scope := "bench:decay:1000000"
	load(b, db, scope, 1_000_000, decayRecord(scope))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := db.Prune(sysCtx(), membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(time.Hour), Scopes: []string{scope}}})
		if err != nil || res.Changed != 0 {
			b.Fatalf("prune: %+v, %v", res, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pass")
}

// episodeRecord is a successful episode: a timeline event whose summary
// is one of 1,000 (so facts repeat), and either one tool call or, for one
// in five, three calls with one of ten signatures (so competences and
// plans are learnt).
func episodeRecord(scope string) func(int) membrane.RecordInput {
	ok := membrane.OutcomeSuccess
	return func(i int) membrane.RecordInput {
		ep := &membrane.EpisodicPayload{Outcome: &ok,
			Timeline: []membrane.TimelineEvent{{T: t0, EventKind: "task", Ref: fmt.Sprint(i), Summary: fmt.Sprintf("step %d done", i%1000)}}}
		if i%5 == 0 {
			sig := (i / 5) % 10
			ep.ToolGraph = []membrane.ToolNode{
				{ID: "1", Tool: fmt.Sprintf("checkout-%d", sig), Args: map[string]any{"repo": "r"}},
				{ID: "2", Tool: fmt.Sprintf("build-%d", sig)},
				{ID: "3", Tool: fmt.Sprintf("test-%d", sig), DependsOn: []string{"2"}},
			}
		} else {
			ep.ToolGraph = []membrane.ToolNode{{ID: "1", Tool: "grep"}}
		}
		return membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope, Payload: membrane.PayloadInput{Episodic: ep}}
	}
}

// BenchmarkConsolidate times a consolidation run over 100,000 new
// episodes (each iteration loads a fresh set, untimed), and then a second
// run over the same data, which must change nothing.
func BenchmarkConsolidate(b *testing.B) {
	db := benchStore(b)
	const n = 100_000
	var first, second time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		scope := fmt.Sprintf("bench:consolidate:%s", membrane.NewID())
		load(b, db, scope, n, episodeRecord(scope))
		c := gqltest.NewClock(t0.Add(25 * time.Hour))
		r, err := jobs.New(db, membrane.DefaultPolicy(), jobs.Config{Timeout: time.Hour, LeaseTTL: time.Minute, Holder: "bench",
			Scopes: []string{scope}, Consolidation: membrane.DefaultConsolidationOptions()}, quiet, c.Now)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		run, err := r.RunJob(sysCtx(), membrane.JobConsolidate)
		took := time.Since(start)
		first += took
		b.StopTimer()
		if err != nil || run.Error != "" {
			b.Fatalf("consolidation: %+v, %v", run, err)
		}
		b.Logf("first run: %v, scanned %d, changed %d, %v", took.Round(time.Millisecond), run.Scanned, run.Changed, run.Details)
		start = time.Now()
		again, err := r.RunJob(sysCtx(), membrane.JobConsolidate)
		second += time.Since(start)
		if err != nil || again.Error != "" || again.Changed != 0 {
			b.Fatalf("second consolidation: %+v, %v", again, err)
		}
		b.Logf("second run: %v, scanned %d, changed %d, %v", time.Since(start).Round(time.Millisecond), again.Scanned, again.Changed, again.Details["stageSeconds"])
		_ = r.Stop(sysCtx())
	}
	b.ReportMetric(first.Seconds()/float64(b.N), "s/run")
	b.ReportMetric(second.Seconds()/float64(b.N), "s/rerun")
}
