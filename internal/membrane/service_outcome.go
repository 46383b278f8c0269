package membrane

import (
	"context"
	"time"
)

// OutcomeService records outcomes: of an episode (ingestOutcome) and of a
// record's use (recordOutcome), as revisions of the record.
type OutcomeService struct {
	revisions *RevisionService
}

// IngestOutcome sets the outcome of an episodic record.
func (s *OutcomeService) IngestOutcome(ctx context.Context, in IngestOutcome, key *string) (*Record, error) {
	if err := ValidateOutcome(in); err != nil {
		return nil, err
	}
	actor := TrustFromContext(ctx).Principal.Actor
	return s.revisions.record(s.revisions.revise(ctx, "ingestOutcome", in, key, []string{in.TargetRecordID}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		c, err := RecordOutcome(locked[in.TargetRecordID], in, now)
		if err == nil {
			// The principal is the actor; the outcome's source is detail.
			c.Audits[0].Actor, c.Audits[0].ActorDetail = actor, in.Source
		}
		return c, err
	}))
}

// RecordOutcome records how using record recordID went.
func (s *OutcomeService) RecordOutcome(ctx context.Context, recordID string, status OutcomeStatus, a RevisionArgs) (*Record, error) {
	a.ExpectedVersion = nil
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"recordId": recordID, "status": status, "meta": meta}
	return s.revisions.record(s.revisions.revise(ctx, "recordOutcome", args, a.IdempotencyKey, []string{recordID}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return RecordUsage(locked[recordID], status, meta, now)
	}))
}
