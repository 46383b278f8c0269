package membrane

import (
	"context"
	"time"
)

// SalienceBuckets are the lower bounds of the salience histogram's buckets
// (the reference's 0.0-0.2 … 0.8-1.0; the last one holds everything from
// 0.8 up, salience above 1 included).
var SalienceBuckets = []float64{0, 0.2, 0.4, 0.6, 0.8}

// RecordCount counts records of one type and status.
type RecordCount struct {
	Type   MemoryType
	Status RevisionStatus
	Count  int64
}

// SalienceBucket counts records with Min <= salience < Max (no Max for the
// last bucket).
type SalienceBucket struct {
	Min   float64
	Max   *float64
	Count int64
}

// ActionCount counts audit entries of one action.
type ActionCount struct {
	Action AuditAction
	Count  int64
}

// Metrics describes the records a caller may see, in full or redacted
// (never those above that or outside its scopes), and their audit trails.
// Every figure is of what the caller can list: what a redacted record
// hides (its lifecycle, payload and audit trail) counts only for records
// seen in full, so that narrowing metrics to one scope cannot read a
// hidden payload's figures.
// The behavioural metrics are the reference's (§1.12), computed by
// aggregation in the database rather than by loading every record.
type Metrics struct {
	CollectedAt  time.Time
	TotalRecords int64
	// RedactedRecords are counted but seen only redacted by the caller.
	RedactedRecords   int64
	Records           []RecordCount
	ActiveRecords     int64 // salience > 0
	PinnedRecords     int64 // seen in full
	SalienceHistogram []SalienceBucket
	AverageSalience   float64
	AverageConfidence float64
	// AuditEntries counts the entries of the records counted that the
	// caller's auditLog lists, those of records seen in full (tombstones of
	// deleted records have no record and are left out).
	AuditEntries  int64
	AuditByAction []ActionCount
	// MemoryGrowthRate: records created in the 24 h before CollectedAt,
	// over all records.
	MemoryGrowthRate float64
	// RetrievalUsefulness: reinforce entries over all audit entries (decay
	// sweeps write none here, so they no longer dilute it).
	RetrievalUsefulness float64
	// CompetenceSuccessRate: mean success rate of competences that have
	// performance counts.
	CompetenceSuccessRate float64
	// PlanReuseFrequency: mean execution count of plans that have metrics.
	PlanReuseFrequency float64
	// RevisionRate: revision entries (revise, supersede, fork, merge,
	// retract, contest) over all audit entries.
	RevisionRate float64
}

// RevisionActions are the audit actions RevisionRate counts.
var RevisionActions = []AuditAction{AuditRevise, AuditSupersede, AuditFork, AuditMerge, AuditRetract, AuditContest}

// MetricsStore computes metrics. Implemented by the neo4j package.
type MetricsStore interface {
	// Metrics aggregates over the records t sees in full or redacted and,
	// when scopes is non-nil, that are in one of scopes ("" for unscoped).
	Metrics(ctx context.Context, t Trust, scopes []string, now time.Time) (*Metrics, error)
}
