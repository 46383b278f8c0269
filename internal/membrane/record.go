// Package membrane holds Membrane's domain: memory records, their payloads,
// lifecycle and provenance, validation, ingestion policy and the pure rules
// (decay, ranking, trust) that the storage and transport adapters apply. It
// imports no driver and no transport package.
package membrane

import (
	"slices"
	"strings"
	"time"
)

// enum is every value of a string type: Valid checks against it and a
// validation message names it, so that neither can drift from the other.
type enum[T ~string] []T

func (e enum[T]) has(v T) bool { return slices.Contains(e, v) }

// String names the values as a message does: "a, b, c".
func (e enum[T]) String() string {
	s := make([]string, len(e))
	for i, v := range e {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// MemoryType is the category of a memory record.
type MemoryType string

// Memory types. Entities are records too: they are the graph's spine.
const (
	TypeEpisodic   MemoryType = "episodic"
	TypeWorking    MemoryType = "working"
	TypeSemantic   MemoryType = "semantic"
	TypeCompetence MemoryType = "competence"
	TypePlanGraph  MemoryType = "plan_graph"
	TypeEntity     MemoryType = "entity"
)

// MemoryTypes lists every memory type in retrieval layer order.
var MemoryTypes = []MemoryType{TypeWorking, TypeEntity, TypeSemantic, TypeCompetence, TypePlanGraph, TypeEpisodic}

// Valid reports whether t is a known memory type.
func (t MemoryType) Valid() bool { return enum[MemoryType](MemoryTypes).has(t) }

// Label is the Neo4j node label of records of this type, beside Memory.
func (t MemoryType) Label() string {
	switch t {
	case TypeEpisodic:
		return "Episodic"
	case TypeWorking:
		return "Working"
	case TypeSemantic:
		return "Semantic"
	case TypeCompetence:
		return "Competence"
	case TypePlanGraph:
		return "PlanGraph"
	case TypeEntity:
		return "Entity"
	}
	return ""
}

// Sensitivity classifies how carefully a record must be handled.
type Sensitivity string

// Sensitivity levels, from least to most sensitive.
const (
	SensitivityPublic Sensitivity = "public"
	SensitivityLow    Sensitivity = "low"
	SensitivityMedium Sensitivity = "medium"
	SensitivityHigh   Sensitivity = "high"
	SensitivityHyper  Sensitivity = "hyper"
)

// Sensitivities lists every sensitivity in level order: a sensitivity's
// level is its index.
var Sensitivities = []Sensitivity{SensitivityPublic, SensitivityLow, SensitivityMedium, SensitivityHigh, SensitivityHyper}

// Level returns the rank of s (public=0 … hyper=4), or -1 when s is unknown.
// Records store the level too, so gating is an indexed range predicate.
func (s Sensitivity) Level() int { return slices.Index(Sensitivities, s) }

// Valid reports whether s is a known sensitivity.
func (s Sensitivity) Valid() bool { return s.Level() >= 0 }

// RevisionStatus is where a record stands in revision.
type RevisionStatus string

// Revision statuses.
const (
	StatusActive    RevisionStatus = "active"
	StatusContested RevisionStatus = "contested"
	StatusRetracted RevisionStatus = "retracted"
	// StatusSuperseded is a record another SUPERSEDES: retired like a
	// retracted one (salience 0, not revisable, left out of retrieval),
	// and told apart from a withdrawal. Merge sources stay retracted: the
	// merged record is DERIVED_FROM them, it replaces none of them alone.
	StatusSuperseded RevisionStatus = "superseded"
)

// RevisionStatuses lists every revision status.
var RevisionStatuses = []RevisionStatus{StatusActive, StatusContested, StatusRetracted, StatusSuperseded}

// Valid reports whether s is a known revision status.
func (s RevisionStatus) Valid() bool { return enum[RevisionStatus](RevisionStatuses).has(s) }

// Retired reports whether s is the end of a record's revisions: retracted
// or superseded.
func (s RevisionStatus) Retired() bool {
	return s == StatusRetracted || s == StatusSuperseded
}

// DecayCurve is the shape of salience decay.
type DecayCurve string

// Decay curves.
const (
	DecayExponential DecayCurve = "exponential"
	DecayLinear      DecayCurve = "linear"
)

var decayCurves = enum[DecayCurve]{DecayExponential, DecayLinear}

// Valid reports whether c is a known curve.
func (c DecayCurve) Valid() bool { return decayCurves.has(c) }

// DeletionPolicy says how a record may be deleted.
type DeletionPolicy string

// Deletion policies.
const (
	DeleteAutoPrune  DeletionPolicy = "auto_prune"
	DeleteManualOnly DeletionPolicy = "manual_only"
	DeleteNever      DeletionPolicy = "never"
)

var deletionPolicies = enum[DeletionPolicy]{DeleteAutoPrune, DeleteManualOnly, DeleteNever}

// Valid reports whether p is a known policy.
func (p DeletionPolicy) Valid() bool { return deletionPolicies.has(p) }

// ProvenanceKind is the kind of a provenance source.
type ProvenanceKind string

// Provenance kinds.
const (
	ProvenanceEvent       ProvenanceKind = "event"
	ProvenanceArtifact    ProvenanceKind = "artifact"
	ProvenanceToolCall    ProvenanceKind = "tool_call"
	ProvenanceObservation ProvenanceKind = "observation"
	ProvenanceOutcome     ProvenanceKind = "outcome"
)

var provenanceKinds = enum[ProvenanceKind]{ProvenanceEvent, ProvenanceArtifact, ProvenanceToolCall, ProvenanceObservation, ProvenanceOutcome}

// Valid reports whether k is a known provenance kind.
func (k ProvenanceKind) Valid() bool { return provenanceKinds.has(k) }

// AuditAction is what an audit entry records.
type AuditAction string

// Audit actions. The reference system's set, plus the revision operations by
// name so that an audit trail reads without decoding rationales.
const (
	AuditCreate    AuditAction = "create"
	AuditRevise    AuditAction = "revise"
	AuditSupersede AuditAction = "supersede"
	AuditFork      AuditAction = "fork"
	AuditMerge     AuditAction = "merge"
	AuditRetract   AuditAction = "retract"
	AuditContest   AuditAction = "contest"
	AuditReinforce AuditAction = "reinforce"
	AuditPenalize  AuditAction = "penalize"
	AuditDecay     AuditAction = "decay"
	AuditRelate    AuditAction = "relate"
	AuditOutcome   AuditAction = "outcome"
	AuditDelete    AuditAction = "delete"
)

var auditActions = enum[AuditAction]{AuditCreate, AuditRevise, AuditSupersede, AuditFork, AuditMerge, AuditRetract, AuditContest,
	AuditReinforce, AuditPenalize, AuditDecay, AuditRelate, AuditOutcome, AuditDelete}

// Valid reports whether a is a known action.
func (a AuditAction) Valid() bool { return auditActions.has(a) }

// Record is a memory record: the atomic unit of storage.
type Record struct {
	ID          string
	Type        MemoryType
	Sensitivity Sensitivity
	// Confidence is the epistemic confidence in [0,1].
	Confidence float64
	// Salience is the stored (materialised) salience, >= 0: the value of
	// EffectiveSalience at the last write or decay sweep. Decay is computed
	// from Lifecycle.BaseSalience, never from this value, so sweeps cannot
	// compound.
	Salience   float64
	Scope      string
	Tags       []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Status     RevisionStatus
	Lifecycle  Lifecycle
	Provenance Provenance
	Payload    Payload
	// ContestEvidence lists external references (URLs, tickets) that contest
	// this record; contesting records are linked by CONTESTED_BY edges.
	ContestEvidence []string
	// Redacted records carry only the fields a request one sensitivity
	// level below may see (see Redact). Not stored.
	Redacted bool
	// AsOf is set on records read as of a past instant; reads of their
	// relations and history are answered as of the same instant. Not stored.
	AsOf *time.Time
	// Version starts at 1 and grows by one with every change of the record;
	// revisions may pass it as expectedVersion for optimistic concurrency.
	Version int64
}

// Lifecycle holds decay, reinforcement and deletion metadata.
type Lifecycle struct {
	Curve           DecayCurve
	HalfLifeSeconds int64
	// MinSalience is the floor decay never goes below.
	MinSalience float64
	// MaxAgeSeconds, when > 0, forces salience to 0 once the record is older.
	MaxAgeSeconds int64
	// ReinforcementGain is added to salience by each reinforce.
	ReinforcementGain float64
	// LastReinforcedAt is the decay anchor: decay runs from this instant.
	LastReinforcedAt time.Time
	// BaseSalience is the salience at LastReinforcedAt, the value decay
	// starts from. Every write that sets Salience sets it too (create,
	// reinforce, penalize, retire); a decay sweep only rewrites Salience.
	BaseSalience float64
	// Compressions counts the windows of age for which consolidation has
	// compressed an episodic record's salience (so it compresses once per
	// window, however often it runs).
	Compressions int64
	// Pinned records never decay.
	Pinned         bool
	DeletionPolicy DeletionPolicy
}

// Provenance links a record to the sources that justify it.
type Provenance struct {
	Sources   []ProvenanceSource `json:"sources"`
	CreatedBy string             `json:"created_by,omitempty"`
}

// ProvenanceSource is one source of a record.
type ProvenanceSource struct {
	Kind      ProvenanceKind `json:"kind"`
	Ref       string         `json:"ref"`
	Hash      string         `json:"hash,omitempty"`
	CreatedBy string         `json:"created_by,omitempty"`
	Timestamp *time.Time     `json:"timestamp,omitempty"`
}

// AuditEntry is one append-only audit record. Entries are their own nodes and
// outlive the record they describe (a deleted record leaves a tombstone).
type AuditEntry struct {
	ID       string
	RecordID string
	Action   AuditAction
	// Actor is the authenticated principal's actor id.
	Actor string
	// ActorDetail is free text a caller may add (a sub-agent, a tool); it
	// never replaces Actor.
	ActorDetail string
	Timestamp   time.Time
	Rationale   string
	// Previous holds the changed fields' values before the action; nil when
	// nothing existed before (create). Enum values are stored as the
	// store spells them ("active"); the API shows ShownPrevious.
	Previous map[string]any
	// Related are typed references to the other records the change relates
	// to (its successor, its source, a removed edge's other end): the only
	// place an entry names another record. Gated per caller (GateEntry).
	// At most MaxAuditRefs.
	Related []AuditRef
	// RelatedOmitted counts the references past MaxAuditRefs that were not
	// stored (a deleted hub's edges). Stored, never shown: it counts
	// records the caller may not see.
	RelatedOmitted int
}

// previousEnums are the keys of AuditEntry.Previous whose values are enum
// values (RevisionStatus, MemoryType).
var previousEnums = []string{"status", "type"}

// ShownPrevious is Previous as the API shows it: enum values spelled as
// the API spells them elsewhere ("status": "ACTIVE", as Record.status),
// where the entry stores the stored spelling ("active", as the node's
// status and Neo4j Browser show). Entries keep being written so, and those
// written before read the same way.
func (a *AuditEntry) ShownPrevious() map[string]any {
	if a.Previous == nil {
		return nil
	}
	out := make(map[string]any, len(a.Previous))
	for k, v := range a.Previous {
		if s, ok := v.(string); ok && slices.Contains(previousEnums, k) {
			v = strings.ToUpper(s)
		}
		out[k] = v
	}
	return out
}
