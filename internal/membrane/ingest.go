package membrane

import (
	"time"
)

// IngestActor is the provenance creator of ingested records.
const IngestActor = "ingestion-service"

// Ingested is a record built by an ingestion path, with its create audit entry.
type Ingested struct {
	Record *Record
	Audit  *AuditEntry
	// Embedding is the record's vector when vector search is configured.
	Embedding []float64
	// EmbeddingModel names the model of Embedding.
	EmbeddingModel string
}

func (p Policy) ingest(meta IngestMeta, kind string, t MemoryType, pk ProvenanceKind, ref string, payload PayloadInput, v *validator, now time.Time) (*Ingested, error) {
	v.str("source", meta.Source, true)
	v.str("ref", ref, false)
	if err := v.err(); err != nil {
		return nil, err
	}
	ts := now.UTC()
	if meta.Timestamp != nil {
		ts = meta.Timestamp.UTC()
	}
	conf := SourceConfidence(kind)
	in := RecordInput{
		Type:        t,
		Sensitivity: meta.Sensitivity,
		Confidence:  &conf,
		Scope:       meta.Scope,
		Tags:        meta.Tags,
		Provenance: &ProvenanceInput{
			Sources:   []ProvenanceSource{{Kind: pk, Ref: ref, CreatedBy: meta.Source, Timestamp: &ts}},
			CreatedBy: new(IngestActor),
		},
		Payload: payload,
	}
	r, err := p.BuildRecord(in, now)
	if err != nil {
		return nil, err
	}
	a := NewAuditEntry(r.ID, AuditCreate, meta.Source, "Ingested "+kind+" from "+meta.Source, now)
	return &Ingested{Record: r, Audit: a}, nil
}

// BuildEvent turns an event into an episodic record with one timeline event.
func (p Policy) BuildEvent(in IngestEvent, now time.Time) (*Ingested, error) {
	v := &validator{}
	v.str("eventKind", in.EventKind, true)
	v.str("ref", in.Ref, true)
	ts := now.UTC()
	if in.Timestamp != nil {
		ts = in.Timestamp.UTC()
	}
	ev := TimelineEvent{T: ts, EventKind: in.EventKind, Ref: in.Ref}
	if in.Summary != nil {
		ev.Summary = *in.Summary
	}
	ep := &EpisodicPayload{Timeline: []TimelineEvent{ev}}
	if in.SessionID != nil {
		ep.SessionID = *in.SessionID
	}
	payload := PayloadInput{Episodic: ep}
	return p.ingest(in.IngestMeta, SourceEvent, TypeEpisodic, ProvenanceEvent, in.Ref, payload, v, now)
}

// BuildToolOutput turns a tool call into an episodic record with one tool node.
func (p Policy) BuildToolOutput(in IngestToolOutput, now time.Time) (*Ingested, error) {
	v := &validator{}
	v.str("toolName", in.ToolName, true)
	v.ids("dependsOn", in.DependsOn)
	ts := now.UTC()
	if in.Timestamp != nil {
		ts = in.Timestamp.UTC()
	}
	node := ToolNode{ID: "1", Tool: in.ToolName, Args: in.Args, Result: in.Result, Timestamp: &ts, DependsOn: in.DependsOn}
	payload := PayloadInput{Episodic: &EpisodicPayload{
		Timeline:  []TimelineEvent{{T: ts, EventKind: "tool_call", Ref: in.ToolName, Summary: "tool_call: " + in.ToolName}},
		ToolGraph: []ToolNode{node},
	}}
	return p.ingest(in.IngestMeta, SourceToolOutput, TypeEpisodic, ProvenanceToolCall, in.ToolName, payload, v, now)
}

// BuildObservation turns an observed fact into a semantic record whose
// evidence is the observation.
func (p Policy) BuildObservation(in IngestObservation, now time.Time) (*Ingested, error) {
	v := &validator{}
	v.str("subject", in.Subject, true)
	v.str("predicate", in.Predicate, true)
	ts := now.UTC()
	if in.Timestamp != nil {
		ts = in.Timestamp.UTC()
	}
	payload := PayloadInput{Semantic: &SemanticPayload{
		Subject:        in.Subject,
		Predicate:      in.Predicate,
		Object:         in.Object,
		Validity:       &Validity{Mode: ValidityGlobal},
		Evidence:       []EvidenceRef{{SourceType: SourceObservation, SourceID: in.Source, Timestamp: &ts}},
		RevisionPolicy: "replace",
	}}
	return p.ingest(in.IngestMeta, SourceObservation, TypeSemantic, ProvenanceObservation, in.Source, payload, v, now)
}

// BuildWorkingState turns a task snapshot into a working record.
func (p Policy) BuildWorkingState(in IngestWorkingState, now time.Time) (*Ingested, error) {
	v := &validator{}
	v.str("threadId", in.ThreadID, true)
	w := &WorkingPayload{
		ThreadID:          in.ThreadID,
		State:             in.State,
		ActiveConstraints: in.ActiveConstraints,
		NextActions:       in.NextActions,
		OpenQuestions:     in.OpenQuestions,
	}
	if in.ContextSummary != nil {
		w.ContextSummary = *in.ContextSummary
	}
	return p.ingest(in.IngestMeta, SourceWorkingState, TypeWorking, ProvenanceEvent, in.ThreadID, PayloadInput{Working: w}, v, now)
}

// ValidateOutcome checks an outcome input before the target is loaded.
func ValidateOutcome(in IngestOutcome) error {
	v := &validator{}
	v.str("source", in.Source, true)
	v.str("targetRecordId", in.TargetRecordID, true)
	oneOf(v, "outcomeStatus", in.OutcomeStatus, outcomeStatuses)
	return v.err()
}

// ApplyOutcome sets the outcome of episodic record r (a copy is returned with
// the change and its audit entry). It is the one change an episodic record
// accepts: an outcome completes the episode rather than revising it.
func ApplyOutcome(r *Record, in IngestOutcome, now time.Time) (*Record, *AuditEntry, error) {
	ep, ok := r.Payload.(*EpisodicPayload)
	if !ok || r.Type != TypeEpisodic {
		return nil, nil, Errorf(EPRECONDITION, "record %s is not episodic; outcomes apply to episodic records", r.ID)
	}
	var prev any
	if ep.Outcome != nil {
		prev = string(*ep.Outcome)
	}
	now = now.UTC()
	ts := now
	if in.Timestamp != nil {
		ts = in.Timestamp.UTC()
	}
	next := *r
	epCopy := *ep
	status := in.OutcomeStatus
	epCopy.Outcome = &status
	next.Payload = &epCopy
	next.Provenance.Sources = append(append([]ProvenanceSource(nil), r.Provenance.Sources...),
		ProvenanceSource{Kind: ProvenanceOutcome, Ref: "outcome:" + r.ID + ":" + string(status), CreatedBy: in.Source, Timestamp: &ts})
	next.UpdatedAt = now
	next.Version = r.Version + 1
	a := NewAuditEntry(r.ID, AuditOutcome, in.Source, "Outcome recorded: "+string(status), now)
	a.Previous = map[string]any{"outcome": prev}
	return &next, a, nil
}

// RecordOutcome plans setting the outcome of episodic record r.
func RecordOutcome(r *Record, in IngestOutcome, now time.Time) (*Change, error) {
	n, a, err := ApplyOutcome(r, in, now)
	if err != nil {
		return nil, err
	}
	return &Change{Updates: []*Record{n}, Audits: []*AuditEntry{a}, Result: n}, nil
}
