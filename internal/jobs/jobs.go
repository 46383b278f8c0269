// Package jobs runs Membrane's maintenance jobs (decay, prune, consolidate)
// on cron schedules. A lease held in Neo4j makes each job run on one
// process at a time, however many server processes share the database;
// every run is recorded as a JobRun node.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// Off is the schedule spec that disables a job.
const Off = "off"

// parser reads the five standard cron fields with an optional leading
// seconds field, or a descriptor (@hourly, @every 10m).
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSpec returns the schedule of a cron spec, or nil for "off".
//
// Use absolute specs (fields, @hourly, @daily) when several processes share
// a database: every process computes the same slots from them, so each slot
// runs once. @every schedules count from each process's start, so replicas
// fire at different moments; the lease still keeps runs from overlapping.
func ParseSpec(spec string) (cron.Schedule, error) {
	if spec == Off {
		return nil, nil
	}
	s, err := parser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron spec %q: %w", spec, err)
	}
	return s, nil
}

// Config configures the runner.
type Config struct {
	// Schedules maps each job to its cron spec; a missing job or "off" is
	// not scheduled (it can still be run on demand).
	Schedules map[membrane.JobName]string
	// Timeout bounds one run.
	Timeout time.Duration
	// LeaseTTL is how long a lease lasts without renewal; a running job
	// renews it every third of that, so a crashed process blocks the job
	// for at most LeaseTTL.
	LeaseTTL time.Duration
	// RetryInterval is how often a scheduled run that found the lease held
	// by a run under way (a manual run, another process's run of the slot,
	// or a dead process's run until its lease expires) tries again, until
	// the next slot is due; LeaseTTL/3 when zero.
	RetryInterval time.Duration
	// Holder identifies this process in leases and runs; DefaultHolder
	// when empty.
	Holder string
	// Scopes, when non-nil, restricts every run to records in these
	// scopes. Production leaves it nil; tests always set it.
	Scopes []string
	// HistoryRetention: see membrane.PruneOptions.
	HistoryRetention time.Duration
	// IdempotencyRetention and RunRetention: see membrane.PruneOptions.
	IdempotencyRetention, RunRetention time.Duration
	// Consolidation tunes the consolidation job.
	Consolidation membrane.ConsolidationOptions
	// AtStart lists scheduled jobs that also run once when the runner
	// starts, for the slot of that instant, rather than first at their
	// schedule's next slot.
	AtStart []membrane.JobName
	// Embedder is the model the embed job embeds records with; nil leaves
	// the embed job unscheduled (run on demand, it fails saying why).
	Embedder membrane.Embedder
	// EmbedMaxSensitivity is the most sensitive level the embed job
	// embeds ("": medium), as for the services' embedding.
	EmbedMaxSensitivity membrane.Sensitivity
	// Observers watch every run (metrics, tracing); none costs nothing.
	Observers []Observer
}

// Outcomes of a run, as reported to observers: those of recorded runs,
// and skipped.
const (
	OutcomeSucceeded = string(membrane.JobSucceeded)
	OutcomeFailed    = string(membrane.JobFailed)
	OutcomeTimeout   = string(membrane.JobTimedOut)
	OutcomeCanceled  = string(membrane.JobCanceled)
	// OutcomeSkipped: the job's lease was held elsewhere (another process
	// runs it, or already ran this slot); nothing ran here.
	OutcomeSkipped = "skipped"
)

// Observer watches job runs. JobRun is called as a run is asked for (before
// the lease is taken) and may return a derived context (a tracing span) the
// run then works in; ended is called once with the run's outcome. The
// interface names no metrics type, so that implementations need not be
// imported here.
type Observer interface {
	JobRun(ctx context.Context, job string) (context.Context, func(outcome string))
}

// DefaultHolder identifies this process: host, pid and a random suffix, so
// a restarted process never mistakes its predecessor's lease for its own.
func DefaultHolder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), membrane.NewID()[24:])
}

// Store is what the jobs need from the database.
type Store interface {
	membrane.LeaseStore
	DecaySweep(ctx context.Context, o membrane.SweepOptions) (membrane.SweepResult, error)
	Prune(ctx context.Context, o membrane.PruneOptions) (membrane.SweepResult, error)
	ConsolidationStore
	membrane.EmbedStore
}

// Runner schedules and runs the jobs. It implements membrane.JobRunner.
type Runner struct {
	store  Store
	policy membrane.Policy
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	cron   *cron.Cron

	// base is canceled by Stop; every run's context derives from it.
	base       context.Context
	cancelBase context.CancelCauseFunc

	mu      sync.Mutex
	stopped bool
	running sync.WaitGroup
}

var _ membrane.JobRunner = (*Runner)(nil)

var (
	errShutdown = errors.New("the server is shutting down")
	errLostLock = errors.New("the lease was lost to another process")
)

// New returns a runner over store with the clock now. It checks every
// schedule; nothing runs until Start.
func New(store Store, policy membrane.Policy, cfg Config, log *slog.Logger, now func() time.Time) (*Runner, error) {
	if cfg.Holder == "" {
		cfg.Holder = DefaultHolder()
	}
	if cfg.Timeout <= 0 {
		return nil, fmt.Errorf("jobs: timeout must be > 0")
	}
	if cfg.LeaseTTL < 3*time.Millisecond {
		return nil, fmt.Errorf("jobs: lease TTL must be >= 3ms")
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = cfg.LeaseTTL / 3
	}
	if err := cfg.Consolidation.Validate(); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if cfg.EmbedMaxSensitivity == "" {
		cfg.EmbedMaxSensitivity = membrane.SensitivityMedium
	}
	r := &Runner{store: store, policy: policy, cfg: cfg, log: log, now: now}
	// Jobs are the server's own work: they act with the system's trust
	// (every record, every scope), never a caller's.
	r.base, r.cancelBase = context.WithCancelCause(membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust(membrane.JobActor)))
	cl := cronLogger{log}
	// No SkipIfStillRunning: a firing that finds the job still running
	// waits for it (see entry.fire) instead of dropping its slot, and the
	// lease already keeps two runs of a job from overlapping.
	r.cron = cron.New(cron.WithParser(parser), cron.WithLogger(cl), cron.WithChain(cron.Recover(cl)))
	for _, job := range membrane.JobNames {
		spec, ok := cfg.Schedules[job]
		if !ok || job == membrane.JobEmbed && cfg.Embedder == nil {
			continue
		}
		sched, err := ParseSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("jobs: %s: %w", job, err)
		}
		if sched != nil {
			r.cron.Schedule(sched, &entry{r: r, job: job, sched: sched})
		}
	}
	return r, nil
}

// Holder is this runner's holder id.
func (r *Runner) Holder() string { return r.cfg.Holder }

// Start starts the schedules, resumes the slot a dead process left under
// way (see entry.resume), and runs the AtStart jobs once. Nothing waits
// for those runs: the server serves meanwhile.
func (r *Runner) Start() {
	now := r.now()
	for _, e := range r.cron.Entries() {
		if en, ok := e.Job.(*entry); ok {
			en.start(now)
			r.running.Add(1)
			safego.Go("jobs resume", func() {
				defer r.running.Done()
				en.resume(now)
				if slices.Contains(r.cfg.AtStart, en.job) {
					en.fire(now)
				}
			})
		}
	}
	r.cron.Start()
	r.log.Info("jobs scheduled", "holder", r.cfg.Holder, "schedules", r.cfg.Schedules, "scopes", r.cfg.Scopes)
}

// Stop stops the schedules, cancels the runs under way and waits, until ctx
// ends, for them to record their end and release their leases. A canceled
// sweep keeps the batches it committed: every job is idempotent, so the
// next run finishes the work.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.cron.Stop()
	r.cancelBase(errShutdown)
	done := make(chan struct{})
	safego.Go("jobs stop", func() {
		r.running.Wait()
		close(done)
	})
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jobs: runs still under way at shutdown: %w", ctx.Err())
	}
}

// RunJob runs job now, on this process, and returns its recorded run (with
// its error, if the job failed). ECONFLICT when it is running somewhere.
func (r *Runner) RunJob(ctx context.Context, job membrane.JobName) (*membrane.JobRun, error) {
	if !job.Valid() {
		return nil, membrane.Errorf(membrane.EINVALID, "unknown job %q", job)
	}
	return r.run(ctx, job, membrane.TriggerManual, nil, nil)
}

// RunScheduled runs job for the schedule slot slot (the instant it was
// due): of every process firing for one slot, exactly one runs it, the
// others get ECONFLICT. While a run is under way (a manual run, another
// process's run of this slot, a dead process's run until its lease
// expires) it waits, looking again every RetryInterval until ctx ends, so
// that a slot is skipped only once a run of it (or of a later slot) ended.
// The cron schedules call it; tests call it directly.
func (r *Runner) RunScheduled(ctx context.Context, job membrane.JobName, slot time.Time) (*membrane.JobRun, error) {
	return r.run(ctx, job, membrane.TriggerSchedule, &slot, &firing{})
}

// JobRuns lists recorded runs, newest first, after marking abandoned the
// runs of this process's jobs whose holder died (see abandon).
func (r *Runner) JobRuns(ctx context.Context, job *membrane.JobName, page membrane.Page) (*membrane.JobRunPage, error) {
	// A failure to mark them (contention on a lease, an outage) must not
	// fail the read: the next read or firing marks them.
	if err := r.abandon(ctx); err != nil && ctx.Err() == nil {
		r.log.WarnContext(ctx, "job runs: marking abandoned runs failed; listing as found", "err", err)
	}
	return r.store.FindJobRuns(ctx, job, page)
}

// errLeaseUnchanged aborts a lease update that has nothing to write.
var errLeaseUnchanged = errors.New("lease unchanged")

// abandon frees the leases of this process's jobs whose holder let them
// expire (it died mid-run) and marks the runs they named abandoned, so
// that jobRuns never shows a dead process's run as under way and its slot
// can run again.
func (r *Runner) abandon(ctx context.Context) error {
	keys := make([]string, 0, len(membrane.JobNames))
	for _, job := range membrane.JobNames {
		key := membrane.LeaseKey(job, r.cfg.Scopes)
		if _, err := r.store.UpdateLease(ctx, key, func(l membrane.Lease) (membrane.Lease, error) {
			if e := l.Expire(r.now()); e != l {
				return e, nil
			}
			// Held or free: nothing to write (a read of jobRuns must not
			// write a lease that a running job renews).
			return l, errLeaseUnchanged
		}); err != nil && !errors.Is(err, errLeaseUnchanged) {
			return err
		}
		keys = append(keys, key)
	}
	_, err := r.store.AbandonJobRuns(ctx, keys, r.now())
	return err
}

// firing says how a scheduled run waits for a lease held by a run under
// way.
type firing struct {
	// until ends the wait, by the runner's clock (zero: only ctx does).
	until time.Time
	// waiting, when set, is called once as the wait begins, with the
	// lease as found.
	waiting func(membrane.Lease)
}

// acquire takes key's lease for the run id, for slot (nil: on demand, and
// f nil). A scheduled run that finds the lease held by a run under way
// waits for it to end or its lease to expire, until ctx ends, the runner
// stops or f.until comes; a manual run gets ECONFLICT at once, and so does
// a slot that already ran.
func (r *Runner) acquire(ctx context.Context, key, id string, slot *time.Time, f *firing) error {
	for waited := false; ; waited = true {
		var wait bool
		var found membrane.Lease
		_, err := r.store.UpdateLease(ctx, key, func(l membrane.Lease) (membrane.Lease, error) {
			now := r.now()
			found = l
			wait = slot != nil && l.Held(now) && !l.Ran(*slot) && (f.until.IsZero() || now.Before(f.until))
			return l.Acquire(r.cfg.Holder, id, slot, now, r.cfg.LeaseTTL)
		})
		if !wait || membrane.ErrorCode(err) != membrane.ECONFLICT {
			return err
		}
		if !waited && f.waiting != nil {
			f.waiting(found)
		}
		// Look again no later than until, so that a firing hands over to
		// the next slot's as that one fires.
		d := r.cfg.RetryInterval
		if !f.until.IsZero() {
			d = min(d, max(f.until.Sub(r.now()), time.Millisecond))
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		case <-r.base.Done():
			t.Stop()
			return err
		}
	}
}

// run acquires the job's lease (see acquire for slot and f), records the
// run, executes it under the run timeout while renewing the lease, and
// records how it ended. ctx only bounds the wait of the caller: the run
// itself stops on its timeout, on Stop, or when its lease is lost.
func (r *Runner) run(ctx context.Context, job membrane.JobName, trigger membrane.JobTrigger, slot *time.Time, f *firing) (run *membrane.JobRun, err error) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil, membrane.Errorf(membrane.EUNAVAILABLE, "jobs are stopped: %v", errShutdown)
	}
	r.running.Add(1)
	r.mu.Unlock()
	defer r.running.Done()

	// The run itself works in a context derived from r.base, not ctx, so
	// what observers add to ctx (a span) is carried over to it below.
	obsCtx, ended := r.observe(ctx, job)
	ctx = obsCtx
	defer func() { ended(outcome(run, err)) }()

	key := membrane.LeaseKey(job, r.cfg.Scopes)
	// The lease names the run (by its id) before the run is recorded, and
	// until its end is: a recorded run that no lease names and that has no
	// end was abandoned.
	id := membrane.NewID()
	if err := r.acquire(ctx, key, id, slot, f); err != nil {
		return nil, err
	}
	// The run starts when its lease is taken, not when it is recorded: the
	// steps between (marking abandoned runs, the record itself) can take a
	// second on a loaded machine, and the record must cover every instant
	// the lease kept other processes from running the job.
	started := r.now().UTC()
	// Taking over an expired lease abandoned the run it named: mark it so
	// now, as the slot it was for runs again.
	if _, err := r.store.AbandonJobRuns(ctx, []string{key}, r.now()); err != nil {
		r.log.WarnContext(ctx, "abandoned job runs not marked; the next look marks them", "job", job, "err", err)
	}
	// Bookkeeping after the run must happen even when the run was
	// canceled, so it gets a context of its own.
	after := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	}
	defer func() {
		c, cancel := after()
		defer cancel()
		if _, err := r.store.UpdateLease(c, key, func(l membrane.Lease) (membrane.Lease, error) {
			return l.Release(r.cfg.Holder), nil
		}); err != nil {
			r.log.ErrorContext(c, "job lease not released; it expires on its own", "job", job, "lease", key, "err", err)
		}
	}()

	run = &membrane.JobRun{ID: id, Job: job, Trigger: trigger, Holder: r.cfg.Holder, Slot: slot,
		Scopes: r.cfg.Scopes, StartedAt: started}
	if err := r.store.CreateJobRun(ctx, run); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancelCause(withValuesOf(r.base, obsCtx))
	defer cancel(nil)
	runCtx, cancelTimeout := context.WithTimeout(runCtx, r.cfg.Timeout)
	defer cancelTimeout()
	stopRenewing := r.renew(runCtx, cancel, key)

	res, details, err := r.execute(runCtx, job, membrane.SweepOptions{Now: run.StartedAt, Scopes: r.cfg.Scopes})
	stopRenewing()
	finished := r.now().UTC()
	run.FinishedAt, run.Scanned, run.Changed, run.Details = &finished, res.Scanned, res.Changed, details
	run.Outcome = membrane.JobSucceeded
	if err != nil {
		run.Error, run.Outcome = r.failure(runCtx, run, err)
	}
	c, cancelAfter := after()
	defer cancelAfter()
	if ferr := r.store.FinishJobRun(c, run); ferr != nil {
		r.log.ErrorContext(c, "job run not recorded", "job", job, "run", run.ID, "err", ferr)
	}
	return run, nil
}

// observe tells every observer that a run of job is asked for.
func (r *Runner) observe(ctx context.Context, job membrane.JobName) (context.Context, func(string)) {
	ends := make([]func(string), 0, len(r.cfg.Observers))
	for _, o := range r.cfg.Observers {
		var end func(string)
		ctx, end = o.JobRun(ctx, string(job))
		ends = append(ends, end)
	}
	return ctx, func(outcome string) {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](outcome)
		}
	}
}

// outcome classifies how a run ended for observers: run is its record,
// err what run returned.
func outcome(run *membrane.JobRun, err error) string {
	switch {
	case membrane.ErrorCode(err) == membrane.ECONFLICT:
		return OutcomeSkipped
	case err != nil || run == nil || run.Outcome == "":
		return OutcomeFailed
	}
	return string(run.Outcome)
}

// valuesOf is a context with the deadline and cancellation of one context
// and the values of another.
type valuesOf struct {
	context.Context
	values context.Context
}

// Value looks in the run's own context first, so that the run keeps the
// system's trust whoever asked for it.
func (c valuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}

// withValuesOf returns parent also carrying the values of values that
// parent lacks: a run stops with the runner (parent) but keeps what
// observers put in the caller's context (values), such as a tracing span,
// so that its transactions are children of it.
func withValuesOf(parent, values context.Context) context.Context {
	return valuesOf{Context: parent, values: values}
}

// failure returns the caller-safe message and the outcome of a failed run
// and logs the full error: run errors are shown over the API, driver text
// is not. The run context's error, read before the run's deferred cancels
// end it, tells a timeout or a cancellation from a failure.
func (r *Runner) failure(runCtx context.Context, run *membrane.JobRun, err error) (string, membrane.JobOutcome) {
	msg, o := "internal error; see the server log for run "+run.ID, membrane.JobFailed
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		msg, o = "timed out after "+r.cfg.Timeout.String(), membrane.JobTimedOut
	case runCtx.Err() != nil:
		msg, o = "canceled: "+context.Cause(runCtx).Error(), membrane.JobCanceled
	case membrane.ErrorCode(err) != membrane.EINTERNAL:
		msg = membrane.ErrorMessage(err)
	}
	r.log.ErrorContext(runCtx, "job failed", "job", run.Job, "run", run.ID, "err", err)
	return msg, o
}

// renew renews the lease every third of its TTL until the returned stop is
// called; losing the lease cancels the run with errLostLock.
func (r *Runner) renew(ctx context.Context, cancel context.CancelCauseFunc, key string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	safego.Go("job lease renewal", func() {
		defer wg.Done()
		t := time.NewTicker(r.cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_, err := r.store.UpdateLease(ctx, key, func(l membrane.Lease) (membrane.Lease, error) {
					return l.Renew(r.cfg.Holder, r.now(), r.cfg.LeaseTTL)
				})
				if membrane.ErrorCode(err) == membrane.ECONFLICT {
					r.log.ErrorContext(ctx, "job lease lost; stopping the run", "lease", key, "err", err)
					cancel(errLostLock)
					return
				} else if err != nil && ctx.Err() == nil {
					// A failed renewal is retried on the next tick; the
					// lease lasts three ticks.
					r.log.WarnContext(ctx, "job lease not renewed", "lease", key, "err", err)
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// execute runs one job, turning a panic into an error so that the run is
// still recorded and the process keeps serving.
func (r *Runner) execute(ctx context.Context, job membrane.JobName, o membrane.SweepOptions) (res membrane.SweepResult, details map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.ErrorContext(ctx, "job panicked", "job", job, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	switch job {
	case membrane.JobDecay:
		res, err = r.store.DecaySweep(ctx, o)
	case membrane.JobPrune:
		res, err = r.store.Prune(ctx, membrane.PruneOptions{SweepOptions: o, HistoryRetention: r.cfg.HistoryRetention,
			IdempotencyRetention: r.cfg.IdempotencyRetention, RunRetention: r.cfg.RunRetention})
	case membrane.JobConsolidate:
		var c *membrane.ConsolidationResult
		c, err = r.consolidate(ctx, o)
		if c != nil {
			res, details = c.Totals(), c.Details()
		}
	case membrane.JobEmbed:
		res, err = membrane.EmbedMissing(ctx, r.store, r.cfg.Embedder, r.cfg.EmbedMaxSensitivity, o)
	default:
		err = membrane.Errorf(membrane.EINVALID, "unknown job %q", job)
	}
	return res, details, err
}

// entry is one scheduled job. It knows the slot each firing is for, so
// that processes firing for the same slot can tell.
type entry struct {
	r     *Runner
	job   membrane.JobName
	sched cron.Schedule

	mu       sync.Mutex
	expected time.Time
}

func (e *entry) start(now time.Time) {
	e.mu.Lock()
	e.expected = e.sched.Next(now)
	e.mu.Unlock()
}

// slot returns the latest scheduled instant at or before fired: the one
// cron woke up for, even if it woke late or skipped a firing.
func (e *entry) slot(fired time.Time) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	slot := e.expected
	for n := e.sched.Next(slot); !n.After(fired); n = e.sched.Next(n) {
		slot = n
	}
	e.expected = e.sched.Next(slot)
	return slot
}

// Run implements cron.Job.
func (e *entry) Run() { e.fire(e.slot(e.r.now())) }

// resume fires for the slot of a scheduled run that the job's lease still
// names as under way at start, unless a later slot is due already. If its
// process died, the run is abandoned once the lease expires and the slot
// runs here; otherwise the slot ends on its own and this firing is
// skipped. Without it, a slot whose every replica restarted would wait
// for the next slot.
func (e *entry) resume(now time.Time) {
	key := membrane.LeaseKey(e.job, e.r.cfg.Scopes)
	var slot *time.Time
	if _, err := e.r.store.UpdateLease(e.r.base, key, func(l membrane.Lease) (membrane.Lease, error) {
		if l.Holder != "" && l.Slot != nil && !l.Ran(*l.Slot) {
			slot = l.Slot
		}
		// Only a read: a lease that a running job renews is not written.
		return l, errLeaseUnchanged
	}); err != nil && !errors.Is(err, errLeaseUnchanged) {
		e.r.log.Warn("job lease not read at start; an unfinished slot waits for the next one", "job", e.job, "err", err)
		return
	}
	if slot != nil && e.sched.Next(*slot).After(now) {
		e.fire(*slot)
	}
}

// fire runs the job for slot. A firing that finds the job running waits
// for the run until the next slot is due; from then on that slot's firing
// stands for it. When the run under way is of this slot (or a later one),
// on another process, the firing is logged as skipped at once and only
// watches the lease in case that process dies, to take the slot over.
func (e *entry) fire(slot time.Time) {
	log := e.r.log.With("job", e.job, "slot", slot, "holder", e.r.cfg.Holder)
	announced := false
	f := &firing{until: e.sched.Next(slot), waiting: func(l membrane.Lease) {
		if l.Slot != nil && !l.Slot.Before(slot) {
			announced = true
			log.Info("job skipped", "reason", "the slot runs on "+l.Holder+"; watching its lease in case that process stops")
			return
		}
		log.Info("job waiting", "reason", "a run on "+l.Holder+" holds the lease; the slot runs when it ends")
	}}
	run, err := e.r.run(e.r.base, e.job, membrane.TriggerSchedule, &slot, f)
	switch {
	case membrane.ErrorCode(err) == membrane.ECONFLICT && announced:
		log.Debug("job slot ran elsewhere", "reason", membrane.ErrorMessage(err))
	case membrane.ErrorCode(err) == membrane.ECONFLICT:
		log.Info("job skipped", "reason", membrane.ErrorMessage(err))
	case err != nil:
		log.Error("job not run", "err", err)
	default:
		log.Info("job finished", "run", run.ID, "scanned", run.Scanned, "changed", run.Changed, "error", run.Error,
			"took", run.FinishedAt.Sub(run.StartedAt))
	}
}

// cronLogger adapts slog to cron's logger.
type cronLogger struct{ l *slog.Logger }

// Info logs cron's routine messages (wake-ups, schedules) at debug level.
func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }

// Error logs cron's errors (a recovered panic, a skipped firing).
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, "err", err)...)
}
