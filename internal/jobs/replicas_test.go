package jobs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

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

// await returns what arrives on ch, failing the test when nothing does
// within a generous protocol timeout.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing within 30s", what)
	}
	panic("unreachable")
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
	await(t, store.started, "the manual run's start")
	c.Set(slot.Add(time.Millisecond))
	fa, fb := fire(a, slot), fire(b, slot)
	// Both replicas found the lease held by the manual run.
	await(t, store.refused, "replica a's firing")
	await(t, other.refused, "replica b's firing")
	// A second manual run, on either replica, is refused at once: one run
	// of a job at a time.
	for _, r := range []*jobs.Runner{a, b} {
		if _, err := r.RunJob(sysCtx(), membrane.JobDecay); membrane.ErrorCode(err) != membrane.ECONFLICT {
			t.Fatalf("runJob while a manual run is under way: %v, want CONFLICT", err)
		}
	}
	close(store.gate)
	if m := await(t, manual, "the manual run"); m.err != nil || m.run.Error != "" || m.run.Slot != nil {
		t.Fatalf("manual run = %+v, %v", m.run, m.err)
	}
	var ran []*membrane.JobRun
	for _, ch := range []<-chan result{fa, fb} {
		res := await(t, ch, "a replica's firing")
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
			await(t, store.started, "the doomed run's start")
			var fb <-chan result
			if tt.waiting {
				fb = fire(b, slot)
			}
			store.kill()
			// Whatever the killed process believed, nothing of its end
			// reached the database.
			await(t, fa, "the killed replica's run")
			// The lease has expired: the dead replica never renewed it.
			expired := slot.Add(ttl + time.Second)
			c.Set(expired)
			if !tt.waiting {
				if _, err := b.JobRuns(sysCtx(), ptr(membrane.JobDecay), firstPage(t)); err != nil {
					t.Fatal(err)
				}
				c.Set(expired.Add(time.Second))
				fb = fire(b, slot)
			}
			res := await(t, fb, "the surviving replica's firing")
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
	p, err := membrane.NewPage(ptr(int64(100)), nil)
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
	await(t, store.started, "the slow run's start")
	c.Set(t0.Add(time.Hour))
	if _, err := b.JobRuns(sysCtx(), ptr(membrane.JobDecay), firstPage(t)); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(sysCtx()); err != nil {
		t.Fatal(err)
	}
	res := await(t, done, "the slow run")
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
	await(t, store.started, "the doomed run's start")
	store.kill()
	await(t, fa, "the killed replica's run")

	// Started while the dead lease lasts: it waits for the expiry.
	c.Set(slot.Add(10 * time.Second))
	seen := make(ends, 10)
	r := runner(t, db, c, "replica-c", []string{scope}, retryFast, func(cfg *jobs.Config) {
		cfg.Schedules = map[membrane.JobName]string{membrane.JobDecay: "@hourly"}
		cfg.Observers = []jobs.Observer{seen}
	})
	r.Start()
	c.Set(slot.Add(time.Minute))
	if got := await(t, seen, "the rerun of the abandoned slot"); got != jobs.OutcomeSucceeded {
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
	first := await(t, results, "the first answer")
	if membrane.ErrorCode(first.err) != membrane.ECONFLICT {
		t.Fatalf("first answer = %+v, %v; want CONFLICT while the other run waits at the gate", first.run, first.err)
	}
	close(gate)
	if second := await(t, results, "the run"); second.err != nil || second.run.Outcome != membrane.JobSucceeded {
		t.Fatalf("the run = %+v, %v", second.run, second.err)
	}
}
