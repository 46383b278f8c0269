package jobs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/metrics"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

var t0 = time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)

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
			Lifecycle: &membrane.LifecycleInput{HalfLifeSeconds: new(int64(3600))},
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
		page, err := membrane.NewPage(new(int64(500)), after)
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

// gated is the real store whose decay sweeps wait until the gate opens,
// so that a test decides when a run ends; started is closed as the first
// sweep begins, and refused receives a value each time the lease is
// refused (the replica found it held).
type gated struct {
	*neo4j.DB
	gate      chan struct{}
	started   chan struct{}
	startOnce sync.Once
	refused   chan struct{}
}

func newGated(db *neo4j.DB) *gated {
	return &gated{DB: db, gate: make(chan struct{}), started: make(chan struct{}), refused: make(chan struct{}, 1000)}
}

func (g *gated) UpdateLease(ctx context.Context, key string, fn func(membrane.Lease) (membrane.Lease, error)) (membrane.Lease, error) {
	l, err := g.DB.UpdateLease(ctx, key, fn)
	if membrane.ErrorCode(err) == membrane.ECONFLICT {
		select {
		case g.refused <- struct{}{}:
		default:
		}
	}
	return l, err
}

func (g *gated) DecaySweep(ctx context.Context, o membrane.SweepOptions) (membrane.SweepResult, error) {
	g.startOnce.Do(func() { close(g.started) })
	select {
	case <-g.gate:
	case <-ctx.Done():
		return membrane.SweepResult{}, ctx.Err()
	}
	return g.DB.DecaySweep(ctx, o)
}

// dying is a replica's store that can be killed: from then on nothing the
// replica does reaches the database, as when its process is SIGKILLed in
// the middle of a run (no renewal, no record of the end, no release).
type dying struct {
	*gated
	mu   sync.Mutex
	dead bool
}

var errKilled = errors.New("the process was killed")

func (d *dying) kill() {
	d.mu.Lock()
	d.dead = true
	d.mu.Unlock()
	close(d.gate)
}

func (d *dying) alive() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return errKilled
	}
	return nil
}

func (d *dying) UpdateLease(ctx context.Context, key string, fn func(membrane.Lease) (membrane.Lease, error)) (membrane.Lease, error) {
	if err := d.alive(); err != nil {
		return membrane.Lease{}, err
	}
	return d.gated.UpdateLease(ctx, key, fn)
}

func (d *dying) FinishJobRun(ctx context.Context, r *membrane.JobRun) error {
	if err := d.alive(); err != nil {
		return err
	}
	return d.DB.FinishJobRun(ctx, r)
}

func (d *dying) DecaySweep(ctx context.Context, o membrane.SweepOptions) (membrane.SweepResult, error) {
	d.startOnce.Do(func() { close(d.started) })
	<-d.gate
	if err := d.alive(); err != nil {
		return membrane.SweepResult{}, err
	}
	return d.DB.DecaySweep(ctx, o)
}

type result struct {
	run *membrane.JobRun
	err error
}

// fire runs job for slot on r in the background; the result arrives on
// the returned channel.
func fire(r *jobs.Runner, slot time.Time) <-chan result {
	done := make(chan result, 1)
	go func() {
		run, err := r.RunScheduled(sysCtx(), membrane.JobDecay, slot)
		done <- result{run, err}
	}()
	return done
}

// retryFast makes a replica that finds the lease held look again every few
// milliseconds (the clock the lease is judged by is the test's).
func retryFast(cfg *jobs.Config) { cfg.RetryInterval = 2 * time.Millisecond }

// A manual run that spans a slot boundary holds the lease as both replicas
// fire for that slot: neither may drop the slot; it runs once, as soon as
// the manual run ends.
func TestManualRunSpanningASlotDoesNotSkipIt(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	facts(t, db, scope, 2, t0)
	slot := t0.Add(time.Hour)
	c := gqltest.NewClock(slot.Add(-10 * time.Second)) // within the lease TTL of the slot
	store, other := newGated(db), newGated(db)
	close(other.gate)
	a := runner(t, store, c, "replica-a", []string{scope}, retryFast)
	b := runner(t, other, c, "replica-b", []string{scope}, retryFast)

	manual := make(chan result, 1)
	go func() {
		run, err := a.RunJob(sysCtx(), membrane.JobDecay)
		manual <- result{run, err}
	}()
	gqltest.Await(t, store.started, "the manual run's start")
	c.Set(slot.Add(time.Millisecond))
	fa, fb := fire(a, slot), fire(b, slot)
	// Both replicas found the lease held by the manual run.
	gqltest.Await(t, store.refused, "replica a's firing")
	gqltest.Await(t, other.refused, "replica b's firing")
	// A second manual run, on either replica, is refused at once: one run
	// of a job at a time.
	for _, r := range []*jobs.Runner{a, b} {
		if _, err := r.RunJob(sysCtx(), membrane.JobDecay); membrane.ErrorCode(err) != membrane.ECONFLICT {
			t.Fatalf("runJob while a manual run is under way: %v, want CONFLICT", err)
		}
	}
	close(store.gate)
	if m := gqltest.Await(t, manual, "the manual run"); m.err != nil || m.run.Error != "" || m.run.Slot != nil {
		t.Fatalf("manual run = %+v, %v", m.run, m.err)
	}
	var ran []*membrane.JobRun
	for _, ch := range []<-chan result{fa, fb} {
		res := gqltest.Await(t, ch, "a replica's firing")
		switch {
		case res.err == nil:
			ran = append(ran, res.run)
		case membrane.ErrorCode(res.err) != membrane.ECONFLICT:
			t.Fatalf("firing for the slot: %v", res.err)
		}
	}
	if len(ran) != 1 || ran[0].Slot == nil || !ran[0].Slot.Equal(slot) || ran[0].Trigger != membrane.TriggerSchedule || ran[0].Error != "" {
		t.Fatalf("runs of the slot the manual run spanned = %+v; want exactly one", ran)
	}
	// The slot ran: firing for it again (late, on either replica) is refused.
	for _, r := range []*jobs.Runner{a, b} {
		if _, err := r.RunScheduled(sysCtx(), membrane.JobDecay, slot); membrane.ErrorCode(err) != membrane.ECONFLICT {
			t.Fatalf("a second run of the slot: %v", err)
		}
	}
}

// A replica SIGKILLed in the middle of a slot's run leaves it unfinished
// and its lease unrenewed. Once the lease expires, the run is marked
// abandoned by whichever replica looks next, and the slot runs again, once.
func TestAbandonedRunIsMarkedAndItsSlotRunsAgain(t *testing.T) {
	tests := []struct {
		name string
		// waiting: the surviving replica fired for the slot while the
		// dead one held it, and waits; otherwise it reads jobRuns after
		// the expiry and then fires late.
		waiting bool
	}{
		{"a replica waiting for the slot takes it over", true},
		{"jobRuns finds it, then the slot is fired again", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := neo4jtest.DB(t)
			scope := neo4jtest.Scope(t)
			facts(t, db, scope, 2, t0)
			slot := t0.Add(time.Hour)
			ttl := 30 * time.Second
			c := gqltest.NewClock(slot.Add(time.Millisecond))
			store := &dying{gated: newGated(db)}
			a := runner(t, store, c, "replica-a", []string{scope}, retryFast)
			b := runner(t, db, c, "replica-b", []string{scope}, retryFast)

			fa := fire(a, slot)
			gqltest.Await(t, store.started, "the doomed run's start")
			var fb <-chan result
			if tt.waiting {
				fb = fire(b, slot)
			}
			store.kill()
			// Whatever the killed process believed, nothing of its end
			// reached the database.
			gqltest.Await(t, fa, "the killed replica's run")
			// The lease has expired: the dead replica never renewed it.
			expired := slot.Add(ttl + time.Second)
			c.Set(expired)
			if !tt.waiting {
				if _, err := b.JobRuns(sysCtx(), new(membrane.JobDecay), firstPage(t)); err != nil {
					t.Fatal(err)
				}
				c.Set(expired.Add(time.Second))
				fb = fire(b, slot)
			}
			res := gqltest.Await(t, fb, "the surviving replica's firing")
			if res.err != nil || res.run.Slot == nil || !res.run.Slot.Equal(slot) || res.run.Error != "" || res.run.Holder != "replica-b" {
				t.Fatalf("rerun of the abandoned slot = %+v, %v", res.run, res.err)
			}
			runs := slotRuns(t, b, scope, slot)
			if len(runs) != 2 {
				t.Fatalf("runs of the slot = %+v; want the abandoned one and its rerun", runs)
			}
			var dead *membrane.JobRun
			for _, r := range runs {
				if r.Holder == "replica-a" {
					dead = r
				}
			}
			if dead == nil || dead.FinishedAt == nil || !dead.FinishedAt.Equal(expired) || dead.Outcome != membrane.JobAbandoned || dead.Error == "" {
				t.Fatalf("the dead replica's run = %+v; want abandoned, finished when found expired (%v)", dead, expired)
			}
			if got := findRun(t, b, res.run.ID); got.Outcome != membrane.JobSucceeded || got.FinishedAt == nil {
				t.Fatalf("the rerun as recorded = %+v", got)
			}
			// Once: the slot ran now, on any replica.
			if _, err := b.RunScheduled(sysCtx(), membrane.JobDecay, slot); membrane.ErrorCode(err) != membrane.ECONFLICT {
				t.Fatalf("a third run of the slot: %v", err)
			}
		})
	}
}

func firstPage(t *testing.T) membrane.Page {
	t.Helper()
	p, err := membrane.NewPage(new(int64(100)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// slotRuns lists the recorded decay runs of scope for slot.
func slotRuns(t *testing.T, r *jobs.Runner, scope string, slot time.Time) []*membrane.JobRun {
	t.Helper()
	var out []*membrane.JobRun
	eachDecayRun(t, r, func(run *membrane.JobRun) bool {
		if len(run.Scopes) == 1 && run.Scopes[0] == scope && run.Slot != nil && run.Slot.Equal(slot) {
			out = append(out, run)
		}
		return true
	})
	return out
}

// A process that was taken for dead (its lease expired and another replica
// marked its run abandoned) but was only slow records its end late: the
// run stays abandoned, as its slot was handed on.
func TestLateEndOfAnAbandonedRunKeepsItAbandoned(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	store := &blocking{DB: db, started: make(chan struct{})}
	a := runner(t, store, c, "slow-replica", []string{scope})
	b := runner(t, db, c, "replica-b", []string{scope})
	done := make(chan result, 1)
	go func() {
		run, err := a.RunJob(sysCtx(), membrane.JobDecay)
		done <- result{run, err}
	}()
	gqltest.Await(t, store.started, "the slow run's start")
	c.Set(t0.Add(time.Hour))
	if _, err := b.JobRuns(sysCtx(), new(membrane.JobDecay), firstPage(t)); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(sysCtx()); err != nil {
		t.Fatal(err)
	}
	res := gqltest.Await(t, done, "the slow run")
	if res.err != nil || res.run.Outcome != membrane.JobCanceled {
		t.Fatalf("the slow run as it saw itself = %+v, %v", res.run, res.err)
	}
	if got := findRun(t, b, res.run.ID); got.Outcome != membrane.JobAbandoned || !got.FinishedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("recorded run = %+v; want it still abandoned", got)
	}
}

// ends is a job observer that reports every run's outcome on a channel.
type ends chan string

func (e ends) JobRun(ctx context.Context, _ string) (context.Context, func(string)) {
	return ctx, func(outcome string) { e <- outcome }
}

// A replica that starts (every other one was restarted, say) after a dead
// process left its slot's run under way reruns that slot once the lease
// expires, without waiting for the next slot.
func TestStartingReplicaRerunsAnAbandonedSlot(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	facts(t, db, scope, 2, t0)
	slot := t0.Add(time.Hour)
	c := gqltest.NewClock(slot.Add(time.Millisecond))
	store := &dying{gated: newGated(db)}
	a := runner(t, store, c, "replica-a", []string{scope}, retryFast)
	fa := fire(a, slot)
	gqltest.Await(t, store.started, "the doomed run's start")
	store.kill()
	gqltest.Await(t, fa, "the killed replica's run")

	// Started while the dead lease lasts: it waits for the expiry.
	c.Set(slot.Add(10 * time.Second))
	seen := make(ends, 10)
	r := runner(t, db, c, "replica-c", []string{scope}, retryFast, func(cfg *jobs.Config) {
		cfg.Schedules = map[membrane.JobName]string{membrane.JobDecay: "@hourly"}
		cfg.Observers = []jobs.Observer{seen}
	})
	r.Start()
	c.Set(slot.Add(time.Minute))
	if got := gqltest.Await(t, seen, "the rerun of the abandoned slot"); got != jobs.OutcomeSucceeded {
		t.Fatalf("rerun outcome = %s", got)
	}
	runs := slotRuns(t, r, scope, slot)
	var holders []string
	for _, run := range runs {
		holders = append(holders, run.Holder+":"+string(run.Outcome))
	}
	if len(runs) != 2 || runs[0].Holder != "replica-c" || runs[0].Outcome != membrane.JobSucceeded || runs[1].Outcome != membrane.JobAbandoned {
		t.Fatalf("runs of the slot = %v; want the abandoned one and replica-c's rerun", holders)
	}
}

// Two replicas asked to run a job at once: one runs it, the other gets
// CONFLICT at once (a manual run never waits).
func TestConcurrentRunJobOneRunOneConflict(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	gate := make(chan struct{})
	sa, sb := newGated(db), newGated(db)
	sa.gate, sb.gate = gate, gate
	a := runner(t, sa, c, "replica-a", []string{scope}, retryFast)
	b := runner(t, sb, c, "replica-b", []string{scope}, retryFast)
	results := make(chan result, 2)
	for _, r := range []*jobs.Runner{a, b} {
		go func() {
			run, err := r.RunJob(sysCtx(), membrane.JobDecay)
			results <- result{run, err}
		}()
	}
	first := gqltest.Await(t, results, "the first answer")
	if membrane.ErrorCode(first.err) != membrane.ECONFLICT {
		t.Fatalf("first answer = %+v, %v; want CONFLICT while the other run waits at the gate", first.run, first.err)
	}
	close(gate)
	if second := gqltest.Await(t, results, "the run"); second.err != nil || second.run.Outcome != membrane.JobSucceeded {
		t.Fatalf("the run = %+v, %v", second.run, second.err)
	}
}

type markKey struct{}

// recorder is a job observer that marks the run's context and remembers
// every outcome.
type recorder struct {
	mu       sync.Mutex
	outcomes []string
}

func (r *recorder) JobRun(ctx context.Context, job string) (context.Context, func(string)) {
	return context.WithValue(ctx, markKey{}, job), func(outcome string) {
		r.mu.Lock()
		r.outcomes = append(r.outcomes, outcome)
		r.mu.Unlock()
	}
}

func (r *recorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.outcomes) == 0 {
		return ""
	}
	return r.outcomes[len(r.outcomes)-1]
}

// probe is the real store, whose decay sweep notes what its context holds
// and, when told to, panics or waits for the run to be stopped.
type probe struct {
	*neo4j.DB
	mu    sync.Mutex
	mark  any
	actor string
	mode  string // "", "panic", "block"
}

func (p *probe) DecaySweep(ctx context.Context, o membrane.SweepOptions) (membrane.SweepResult, error) {
	p.mu.Lock()
	p.mark, p.actor = ctx.Value(markKey{}), membrane.TrustFromContext(ctx).Principal.Actor
	mode := p.mode
	p.mu.Unlock()
	switch mode {
	case "panic":
		panic("sweep exploded")
	case "block":
		<-ctx.Done()
		return membrane.SweepResult{}, ctx.Err()
	}
	return p.DB.DecaySweep(ctx, o)
}

// TestObserversSeeEveryOutcome runs jobs that succeed, fail, time out and
// find their lease taken, and checks what observers and the metrics got;
// the run works in the observer's context, with the system's trust even
// when a reader asked for it.
func TestObserversSeeEveryOutcome(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(t0)
	rec := &recorder{}
	m := metrics.New()
	store := &probe{DB: db}
	r := runner(t, store, c, "observed", []string{scope}, func(cfg *jobs.Config) {
		cfg.Observers = []jobs.Observer{m, rec}
		cfg.Timeout = 200 * time.Millisecond
	})
	reader := membrane.NewContextWithTrust(context.Background(), membrane.Trust{Principal: membrane.Principal{Actor: "a-reader", Role: membrane.RoleReader}})
	tests := []struct {
		name, mode, want string
		before           func()
	}{
		{"succeeded", "", jobs.OutcomeSucceeded, nil},
		{"failed", "panic", jobs.OutcomeFailed, nil},
		{"timed out", "block", jobs.OutcomeTimeout, nil},
		{"lease held elsewhere", "", jobs.OutcomeSkipped, func() {
			if _, err := db.UpdateLease(sysCtx(), membrane.LeaseKey(membrane.JobDecay, []string{scope}),
				func(l membrane.Lease) (membrane.Lease, error) {
					return l.Acquire("elsewhere", "elsewhere-run", nil, t0, time.Minute)
				}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store.mu.Lock()
			store.mode, store.mark, store.actor = tt.mode, nil, ""
			store.mu.Unlock()
			if tt.before != nil {
				tt.before()
			}
			_, _ = r.RunJob(reader, membrane.JobDecay)
			if got := rec.last(); got != tt.want {
				t.Fatalf("outcome = %q, want %q", got, tt.want)
			}
			store.mu.Lock()
			defer store.mu.Unlock()
			if tt.want != jobs.OutcomeSkipped && (store.mark != "decay" || store.actor != membrane.JobActor) {
				t.Fatalf("the run saw mark %v and actor %q", store.mark, store.actor)
			}
		})
	}
	out := httptest.NewRecorder()
	m.Handler().ServeHTTP(out, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(out.Body)
	for _, outcome := range []string{jobs.OutcomeSucceeded, jobs.OutcomeFailed, jobs.OutcomeTimeout, jobs.OutcomeSkipped} {
		line := `membrane_job_runs_total{job="decay",outcome="` + outcome + `"} 1`
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("want %q in the metrics", line)
		}
	}
}
