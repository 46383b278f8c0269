package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

var t0 = time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// runner returns a runner restricted to scopes (always: the test database
// is shared), with no schedules and the given holder.
func runner(t *testing.T, store jobs.Store, c *gqltest.Clock, holder string, scopes []string, edit ...func(*jobs.Config)) *jobs.Runner {
	t.Helper()
	cfg := jobs.Config{Timeout: time.Minute, LeaseTTL: 30 * time.Second, Holder: holder, Scopes: scopes,
		Consolidation: membrane.DefaultConsolidationOptions()}
	for _, e := range edit {
		e(&cfg)
	}
	r, err := jobs.New(store, membrane.DefaultPolicy(), cfg, quiet, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop(sysCtx()) })
	return r
}

func facts(t *testing.T, db *neo4j.DB, scope string, n int, at time.Time) []*membrane.Record {
	t.Helper()
	ins := make([]membrane.RecordInput, n)
	for i := range ins {
		ins[i] = membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope,
			Lifecycle: &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(3600))},
			Payload:   membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "s", Predicate: "p", Object: i}}}
	}
	return neo4jtest.Create(t, db, at, ins...)
}

func findRun(t *testing.T, r *jobs.Runner, id string) *membrane.JobRun {
	t.Helper()
	var found *membrane.JobRun
	eachDecayRun(t, r, func(run *membrane.JobRun) bool {
		if run.ID == id {
			found = run
		}
		return found == nil
	})
	if found == nil {
		t.Fatalf("run %s not listed", id)
	}
	return found
}

// eachDecayRun calls fn with the recorded decay runs, newest first, page
// by page, until fn returns false or none are left.
func eachDecayRun(t *testing.T, r *jobs.Runner, fn func(*membrane.JobRun) bool) {
	t.Helper()
	job := membrane.JobDecay
	var after *string
	for {
		page, err := membrane.NewPage(ptr(int64(500)), after)
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.JobRuns(sysCtx(), &job, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range p.Items {
			if !fn(run) {
				return
			}
		}
		if !p.PageInfo.HasNextPage {
			return
		}
		after = p.PageInfo.EndCursor
	}
}

func TestRunJobRecordsTheRun(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	recs := facts(t, db, scope, 3, t0)
	c := gqltest.NewClock(t0.Add(time.Hour))
	r := runner(t, db, c, "holder-a", []string{scope})
	run, err := r.RunJob(sysCtx(), membrane.JobDecay)
	if err != nil {
		t.Fatal(err)
	}
	if run.Error != "" || run.Outcome != membrane.JobSucceeded || run.Scanned != 3 || run.Changed != 3 || run.Trigger != membrane.TriggerManual || run.Holder != "holder-a" ||
		run.Slot != nil || !run.StartedAt.Equal(c.Now()) || run.FinishedAt == nil {
		t.Fatalf("run = %+v", run)
	}
	got := findRun(t, r, run.ID)
	if got.Scanned != 3 || got.Changed != 3 || got.FinishedAt == nil || got.Outcome != membrane.JobSucceeded || len(got.Scopes) != 1 || got.Scopes[0] != scope {
		t.Fatalf("recorded run = %+v", got)
	}
	rec, err := db.FindRecordByID(sysCtx(), recs[0].ID)
	if err != nil || math.Abs(rec.Salience-0.5) > 1e-12 {
		t.Fatalf("salience after a decay run one half-life on = %v, %v", rec.Salience, err)
	}
	if _, err := r.RunJob(sysCtx(), "defrag"); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("unknown job: %v", err)
	}
}

// Two runners (two processes' worth: distinct holder ids, one database)
// fire for the same slots at once: each slot runs exactly once.
func TestScheduledSlotRunsOnceAcrossRunners(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	facts(t, db, scope, 2, t0)
	c := gqltest.NewClock(t0)
	// The loser of a slot waits for the winner's run to end, then finds
	// the slot ran.
	a := runner(t, db, c, "process-a", []string{scope}, retryFast)
	b := runner(t, db, c, "process-b", []string{scope}, retryFast)
	ctx := sysCtx()
	ran := map[time.Time]int{}
	for i := 0; i < 8; i++ {
		slot := t0.Add(time.Duration(i) * time.Hour)
		c.Set(slot.Add(time.Millisecond))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j, r := range []*jobs.Runner{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[j] = r.RunScheduled(ctx, membrane.JobDecay, slot)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			switch {
			case err == nil:
				ran[slot]++
			case membrane.ErrorCode(err) != membrane.ECONFLICT:
				t.Fatalf("slot %v: %v", slot, err)
			}
		}
		// Firing late for a slot that ran is refused too.
		if _, err := b.RunScheduled(ctx, membrane.JobDecay, slot); membrane.ErrorCode(err) != membrane.ECONFLICT {
			t.Fatalf("a second run for slot %v: %v", slot, err)
		}
	}
	for i := 0; i < 8; i++ {
		if n := ran[t0.Add(time.Duration(i)*time.Hour)]; n != 1 {
			t.Fatalf("slot %d ran %d times, want exactly once (runs: %v)", i, n, ran)
		}
	}
}

func TestLeaseHeldElsewhere(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	r := runner(t, db, c, "me", []string{scope})
	ctx := sysCtx()
	key := membrane.LeaseKey(membrane.JobPrune, []string{scope})
	// Another process holds the lease (and then crashes: it never renews).
	if _, err := db.UpdateLease(ctx, key, func(l membrane.Lease) (membrane.Lease, error) {
		return l.Acquire("crashed-process", "crashed-run", nil, t0, time.Minute)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunJob(ctx, membrane.JobPrune); membrane.ErrorCode(err) != membrane.ECONFLICT {
		t.Fatalf("run while another process holds the lease: %v, want CONFLICT", err)
	}
	c.Set(t0.Add(time.Minute))
	run, err := r.RunJob(ctx, membrane.JobPrune)
	if err != nil || run.Error != "" {
		t.Fatalf("run after the lease expired: %+v, %v", run, err)
	}
	l, err := db.UpdateLease(ctx, key, func(l membrane.Lease) (membrane.Lease, error) { return l, nil })
	if err != nil || l.Holder != "" {
		t.Fatalf("lease after the run = %+v, %v; want released", l, err)
	}
}

// blocking is the real store, except that its decay sweep panics or waits
// for its context to end: the ways a run can fail.
type blocking struct {
	*neo4j.DB
	started chan struct{}
	panics  bool
}

func (b *blocking) DecaySweep(ctx context.Context, _ membrane.SweepOptions) (membrane.SweepResult, error) {
	if b.panics {
		panic("sweep exploded")
	}
	close(b.started)
	<-ctx.Done()
	return membrane.SweepResult{Scanned: 7}, ctx.Err()
}

func TestPanicIsRecordedAndRecovered(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	r := runner(t, &blocking{DB: db, panics: true}, c, "me", []string{scope})
	run, err := r.RunJob(sysCtx(), membrane.JobDecay)
	if err != nil {
		t.Fatal(err)
	}
	if run.Error != "internal error; see the server log for run "+run.ID || run.FinishedAt == nil {
		t.Fatalf("panicked run = %+v", run)
	}
	if got := findRun(t, r, run.ID); got.Error != run.Error || got.Outcome != membrane.JobFailed {
		t.Fatalf("recorded run = %+v", got)
	}
	// The lease was released: the next run is not refused.
	if _, err := r.RunJob(sysCtx(), membrane.JobDecay); err != nil {
		t.Fatalf("run after a panic: %v", err)
	}
}

func TestRunTimeout(t *testing.T) {
	db := neo4jtest.DB(t)
	c := gqltest.NewClock(t0)
	r := runner(t, &blocking{DB: db, started: make(chan struct{})}, c, "me", []string{neo4jtest.Scope(t)},
		func(cfg *jobs.Config) { cfg.Timeout = 50 * time.Millisecond })
	run, err := r.RunJob(sysCtx(), membrane.JobDecay)
	if err != nil {
		t.Fatal(err)
	}
	if run.Error != "timed out after 50ms" || run.Scanned != 7 || run.Outcome != membrane.JobTimedOut {
		t.Fatalf("run = %+v", run)
	}
}

func TestStopWaitsForTheRunningJob(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	store := &blocking{DB: db, started: make(chan struct{})}
	r := runner(t, store, c, "me", []string{scope})
	type result struct {
		run *membrane.JobRun
		err error
	}
	done := make(chan result, 1)
	go func() {
		run, err := r.RunJob(sysCtx(), membrane.JobDecay)
		done <- result{run, err}
	}()
	<-store.started
	if err := r.Stop(sysCtx()); err != nil {
		t.Fatal(err)
	}
	// Stop returned: the run has ended and recorded it.
	var res result
	select {
	case res = <-done:
	default:
		t.Fatal("Stop returned before the running job ended")
	}
	if res.err != nil || res.run.Error != "canceled: the server is shutting down" {
		t.Fatalf("run = %+v, %v", res.run, res.err)
	}
	if got := findRun(t, r, res.run.ID); got.FinishedAt == nil || got.Error != res.run.Error || got.Outcome != membrane.JobCanceled {
		t.Fatalf("recorded run = %+v", got)
	}
	l, err := db.UpdateLease(sysCtx(), membrane.LeaseKey(membrane.JobDecay, []string{scope}),
		func(l membrane.Lease) (membrane.Lease, error) { return l, nil })
	if err != nil || l.Holder != "" {
		t.Fatalf("lease after Stop = %+v, %v", l, err)
	}
	if _, err := r.RunJob(sysCtx(), membrane.JobDecay); membrane.ErrorCode(err) != membrane.EUNAVAILABLE {
		t.Fatalf("run after Stop: %v", err)
	}
}

func TestLostLeaseStopsTheRun(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	store := &blocking{DB: db, started: make(chan struct{})}
	r := runner(t, store, c, "me", []string{scope}, func(cfg *jobs.Config) { cfg.LeaseTTL = 30 * time.Millisecond })
	done := make(chan *membrane.JobRun, 1)
	go func() {
		run, err := r.RunJob(sysCtx(), membrane.JobDecay)
		if err != nil {
			t.Error(err)
		}
		done <- run
	}()
	<-store.started
	// Another process takes the lease over (as after an expiry).
	if _, err := db.UpdateLease(sysCtx(), membrane.LeaseKey(membrane.JobDecay, []string{scope}),
		func(l membrane.Lease) (membrane.Lease, error) {
			return membrane.Lease{Key: l.Key, Holder: "thief", ExpiresAt: t0.Add(time.Hour)}, nil
		}); err != nil {
		t.Fatal(err)
	}
	run := <-done
	if run == nil || run.Error != "canceled: the lease was lost to another process" {
		t.Fatalf("run = %+v", run)
	}
}

func TestSchedules(t *testing.T) {
	for _, spec := range []string{"@hourly", "0 */6 * * *", "*/5 * * * * *", "@every 90s", jobs.Off} {
		if _, err := jobs.ParseSpec(spec); err != nil {
			t.Errorf("ParseSpec(%q): %v", spec, err)
		}
	}
	for _, spec := range []string{"", "hourly", "61 * * * *"} {
		if _, err := jobs.ParseSpec(spec); err == nil {
			t.Errorf("ParseSpec(%q) accepted", spec)
		}
	}
	if _, err := jobs.New(nil, membrane.DefaultPolicy(), jobs.Config{Timeout: time.Minute, LeaseTTL: time.Minute,
		Consolidation: membrane.DefaultConsolidationOptions(), Schedules: map[membrane.JobName]string{membrane.JobDecay: "nope"}}, quiet, time.Now); err == nil {
		t.Fatal("New accepted a bad spec")
	}
}
