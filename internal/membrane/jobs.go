package membrane

import (
	"context"
	"slices"
	"time"
)

// JobName names a maintenance job.
type JobName string

// Maintenance jobs.
const (
	// JobDecay materialises effective salience (the decay sweep).
	JobDecay JobName = "decay"
	// JobPrune deletes auto_prune records whose salience reached the floor.
	JobPrune JobName = "prune"
	// JobConsolidate compresses episodes and extracts facts, competences
	// and plans from them.
	JobConsolidate JobName = "consolidate"
	// JobEmbed gives vectors to the records that have none by the
	// configured embedding model (EmbedMissing).
	JobEmbed JobName = "embed"
)

// JobNames lists every job.
var JobNames = []JobName{JobDecay, JobPrune, JobConsolidate, JobEmbed}

// Valid reports whether j is a known job.
func (j JobName) Valid() bool { return slices.Contains(JobNames, j) }

// JobTrigger says what started a job run.
type JobTrigger string

// Triggers.
const (
	TriggerSchedule JobTrigger = "schedule"
	TriggerManual   JobTrigger = "manual"
)

// JobOutcome says how a run ended.
type JobOutcome string

// Outcomes of a recorded run.
const (
	JobSucceeded JobOutcome = "succeeded"
	// JobFailed: the job returned an error (Error says which).
	JobFailed JobOutcome = "failed"
	// JobTimedOut: the run reached the jobs' timeout.
	JobTimedOut JobOutcome = "timeout"
	// JobCanceled: the server shut down or the run lost its lease.
	JobCanceled JobOutcome = "canceled"
	// JobAbandoned: the process running it stopped (was killed, lost the
	// database) without recording its end; another process found its
	// lease expired and marked it so. Its slot may run again.
	JobAbandoned JobOutcome = "abandoned"
)

// AbandonedMessage is the Error of an abandoned run.
const AbandonedMessage = "abandoned: the process running it stopped renewing its lease and never recorded the end"

// SweepOptions times and bounds one maintenance pass over the records.
type SweepOptions struct {
	// Now is the instant the pass computes for (the injected clock).
	Now time.Time
	// Scopes, when non-nil, restricts the pass to records in these scopes.
	// Production runs leave it nil; tests always set it, because the test
	// database is shared by packages that assert exact salience values.
	Scopes []string
}

// SweepResult counts what one pass looked at and what it changed.
type SweepResult struct {
	Scanned int64
	Changed int64
}

// JobRun is one run of a job, recorded as a JobRun node whether it
// succeeded, failed or was cut short.
type JobRun struct {
	ID      string
	Job     JobName
	Trigger JobTrigger
	// Holder identifies the process that ran it (its lease holder id).
	Holder string
	// Slot is the scheduled instant a scheduled run is for; nil for manual
	// runs. Two processes firing for one slot run it once.
	Slot      *time.Time
	Scopes    []string
	StartedAt time.Time
	// FinishedAt is nil while the run is under way; for an abandoned run,
	// the instant another process found its lease expired.
	FinishedAt *time.Time
	// Outcome is "" while the run is under way.
	Outcome JobOutcome
	Scanned int64
	Changed int64
	// Error is the caller-safe message of a failed run, "" on success.
	Error string
	// Details holds per-stage counts (consolidation) as a JSON object.
	Details map[string]any
}

// JobRunPage is one page of job runs, newest first.
type JobRunPage = PageOf[*JobRun]

// JobRunner runs maintenance jobs on demand and lists their runs.
// Implemented by the jobs package; the JobService is the application's way
// to it.
type JobRunner interface {
	// RunJob runs job now on this process and returns its recorded run.
	// ECONFLICT when the job is already running somewhere.
	RunJob(ctx context.Context, job JobName) (*JobRun, error)
	// JobRuns lists recorded runs, newest first; job nil means every job.
	JobRuns(ctx context.Context, job *JobName, page Page) (*JobRunPage, error)
}
