package membrane

import (
	"time"
)

// RecordInput describes a record to create. Nil fields take the policy's
// defaults. It is the shape of createRecord, ingestBatch and the new record
// of every revision.
type RecordInput struct {
	// ID is optional; a time-ordered UUID is generated when empty.
	ID          *string
	Type        MemoryType
	Sensitivity *Sensitivity
	Confidence  *float64
	Salience    *float64
	Scope       *string
	Tags        []string
	Lifecycle   *LifecycleInput
	Provenance  *ProvenanceInput
	Payload     PayloadInput
}

// LifecycleInput overrides parts of the default lifecycle.
type LifecycleInput struct {
	Curve             *DecayCurve
	HalfLifeSeconds   *int64
	MinSalience       *float64
	MaxAgeSeconds     *int64
	ReinforcementGain *float64
	Pinned            *bool
	DeletionPolicy    *DeletionPolicy
}

// ProvenanceInput is the provenance of a new record.
type ProvenanceInput struct {
	Sources   []ProvenanceSource
	CreatedBy *string
}

// PayloadInput carries exactly one payload, the one matching the record type.
type PayloadInput struct {
	Episodic   *EpisodicPayload
	Working    *WorkingPayload
	Semantic   *SemanticPayload
	Competence *CompetencePayload
	PlanGraph  *PlanGraphPayload
	Entity     *EntityPayload
}

// payloads returns the payloads that are set.
func (in PayloadInput) payloads() []Payload {
	var ps []Payload
	if in.Episodic != nil {
		ps = append(ps, in.Episodic)
	}
	if in.Working != nil {
		ps = append(ps, in.Working)
	}
	if in.Semantic != nil {
		ps = append(ps, in.Semantic)
	}
	if in.Competence != nil {
		ps = append(ps, in.Competence)
	}
	if in.PlanGraph != nil {
		ps = append(ps, in.PlanGraph)
	}
	if in.Entity != nil {
		ps = append(ps, in.Entity)
	}
	return ps
}

// IngestMeta is what every ingestion input shares.
type IngestMeta struct {
	// Source names who or what produced the input (an agent, a tool…).
	Source      string
	Timestamp   *time.Time
	Tags        []string
	Scope       *string
	Sensitivity *Sensitivity
}

// IngestEvent records an event as an episodic record.
type IngestEvent struct {
	IngestMeta
	EventKind string
	Ref       string
	Summary   *string
	// SessionID: see EpisodicPayload.SessionID.
	SessionID *string
}

// IngestToolOutput records a tool call and its result as an episodic record.
type IngestToolOutput struct {
	IngestMeta
	ToolName  string
	Args      map[string]any
	Result    any
	DependsOn []string
}

// IngestObservation records an observed fact as a semantic record.
type IngestObservation struct {
	IngestMeta
	Subject   string
	Predicate string
	Object    any
}

// IngestWorkingState records the state of a task as a working record.
type IngestWorkingState struct {
	IngestMeta
	ThreadID          string
	State             TaskState
	NextActions       []string
	OpenQuestions     []string
	ContextSummary    *string
	ActiveConstraints []Constraint
}

// IngestOutcome records how an episode ended, on the episodic record itself.
type IngestOutcome struct {
	Source         string
	TargetRecordID string
	OutcomeStatus  OutcomeStatus
	Timestamp      *time.Time
}
