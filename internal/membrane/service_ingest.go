package membrane

import (
	"context"
	"strconv"
	"time"
)

// IngestService creates records: from the ingestion inputs (events, tool
// outputs, observations, working states) and from full record inputs
// (createRecord, ingestBatch). It checks that the request may create each
// record, derives the idempotency key and embeds the records before they
// are written.
type IngestService struct {
	store  RecordStore
	policy Policy
	embed  embedding
	now    func() time.Time
}

// IngestEvent stores an event as an episodic record.
func (s *IngestService) IngestEvent(ctx context.Context, in IngestEvent, key *string) (*Record, error) {
	return s.ingest(ctx, "ingestEvent", in, key, func(now time.Time) (*Ingested, error) { return s.policy.BuildEvent(in, now) })
}

// IngestToolOutput stores a tool call as an episodic record.
func (s *IngestService) IngestToolOutput(ctx context.Context, in IngestToolOutput, key *string) (*Record, error) {
	return s.ingest(ctx, "ingestToolOutput", in, key, func(now time.Time) (*Ingested, error) { return s.policy.BuildToolOutput(in, now) })
}

// IngestObservation stores an observed fact as a semantic record.
func (s *IngestService) IngestObservation(ctx context.Context, in IngestObservation, key *string) (*Record, error) {
	return s.ingest(ctx, "ingestObservation", in, key, func(now time.Time) (*Ingested, error) { return s.policy.BuildObservation(in, now) })
}

// IngestWorkingState stores a task snapshot as a working record.
func (s *IngestService) IngestWorkingState(ctx context.Context, in IngestWorkingState, key *string) (*Record, error) {
	return s.ingest(ctx, "ingestWorkingState", in, key, func(now time.Time) (*Ingested, error) { return s.policy.BuildWorkingState(in, now) })
}

// ingest builds one record with build and stores it under the request's
// trust, with op and input as its idempotency fingerprint.
func (s *IngestService) ingest(ctx context.Context, op string, input any, key *string, build func(time.Time) (*Ingested, error)) (*Record, error) {
	in, err := build(s.now())
	if err != nil {
		return nil, err
	}
	t := TrustFromContext(ctx)
	if err := t.CanCreate(in.Record); err != nil {
		return nil, err
	}
	// The audit names the authenticated principal; the input's source
	// (which agent or tool produced it) is kept as detail.
	in.Audit.Actor, in.Audit.ActorDetail = t.Principal.Actor, in.Audit.Actor
	idem, err := RequestIdempotency(t, key, op, input)
	if err != nil {
		return nil, err
	}
	s.embed.ingested(ctx, []*Ingested{in})
	recs, err := s.store.CreateRecords(ctx, idem, []*Ingested{in})
	if err != nil {
		return nil, err
	}
	s.embed.written(recs...)
	return recs[0], nil
}

// CreateRecord creates one record (createRecord); actor is the caller's
// free-text detail of who wrote it.
func (s *IngestService) CreateRecord(ctx context.Context, in RecordInput, actor, key *string) (*Record, error) {
	recs, err := s.createRecords(ctx, []*RecordInput{&in}, actor, key, "")
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// CreateRecords creates up to MaxBatch records in one transaction
// (ingestBatch). Errors of one input name it by its index under field.
func (s *IngestService) CreateRecords(ctx context.Context, inputs []*RecordInput, actor, key *string, field string) ([]*Record, error) {
	if len(inputs) > MaxBatch {
		return nil, Errorf(EINVALID, "too many records: %d (max %d)", len(inputs), MaxBatch)
	}
	return s.createRecords(ctx, inputs, actor, key, field)
}

// createRecords builds and validates every input, then writes them all in
// one transaction. Field errors of a batch are prefixed with the input's
// index under field, so a client finds the bad record.
func (s *IngestService) createRecords(ctx context.Context, inputs []*RecordInput, actor, key *string, field string) ([]*Record, error) {
	t := TrustFromContext(ctx)
	if err := t.CanWrite(); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(inputs))
	for _, in := range inputs {
		if in.ID != nil {
			ids = append(ids, *in.ID)
		}
	}
	idem, err := RequestIdempotency(t, key, "createRecords", map[string]any{"inputs": inputs, "actor": actor}, ids...)
	if err != nil {
		return nil, err
	}
	detail := ""
	if actor != nil {
		if len(*actor) > 256 {
			return nil, Errorf(EINVALID, "actor exceeds 256 bytes")
		}
		detail = *actor
	}
	now := s.now()
	batch := make([]*Ingested, len(inputs))
	seen := make(map[string]int, len(inputs))
	for i, in := range inputs {
		rec, err := s.policy.BuildRecord(*in, now)
		if err != nil {
			if field != "" {
				return nil, PrefixFields(err, field+"["+strconv.Itoa(i)+"].")
			}
			return nil, err
		}
		if rec.Provenance.CreatedBy == "" {
			// As a revision's new record: created by the principal (the
			// actor argument is free text, kept as the audit's detail).
			rec.Provenance.CreatedBy = t.Principal.Actor
		}
		if err := t.CanCreate(rec); err != nil {
			if field != "" {
				return nil, Errorf(EFORBIDDEN, "%s[%d]: %s", field, i, ErrorMessage(err))
			}
			return nil, err
		}
		if j, dup := seen[rec.ID]; dup {
			return nil, Errorf(EINVALID, "%s[%d] and %s[%d] have the same id", field, j, field, i)
		}
		seen[rec.ID] = i
		audit := NewAuditEntry(rec.ID, AuditCreate, t.Principal.Actor, "Created "+string(rec.Type)+" record", now)
		audit.ActorDetail = detail
		batch[i] = &Ingested{Record: rec, Audit: audit}
	}
	s.embed.ingested(ctx, batch)
	recs, err := s.store.CreateRecords(ctx, idem, batch)
	if err == nil {
		s.embed.written(recs...)
	}
	return recs, err
}
