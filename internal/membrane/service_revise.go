package membrane

import (
	"context"
	"time"
)

// RevisionArgs are what a caller says about a revision besides its target:
// free-text detail of who (the principal is the actor), why, the version it
// expects the target to be at, and its idempotency key. Nil means unset.
type RevisionArgs struct {
	Actor           *string
	Rationale       *string
	ExpectedVersion *int64
	IdempotencyKey  *string
}

// meta returns the audit metadata of a revision by t's principal: the
// principal is the actor, and the caller's free-text actor only adds detail.
func (a RevisionArgs) meta(t Trust) RevisionMeta {
	m := RevisionMeta{Actor: t.Principal.Actor, ExpectedVersion: a.ExpectedVersion}
	if a.Actor != nil {
		m.ActorDetail = *a.Actor
	}
	if a.Rationale != nil {
		m.Rationale = *a.Rationale
	}
	return m
}

// RevisionService revises records (supersede, fork, retract, merge,
// contest, reinforce, penalize) under the request's trust, with the
// request's clock reading and idempotency key; RelationService and
// OutcomeService write through it.
type RevisionService struct {
	store  RevisionStore
	policy Policy
	now    func() time.Time
	// embed gets the records that supersede, fork and merge create to
	// the background vector writer (when there is one; otherwise the
	// embed job gives them their vectors).
	embed embedding
}

// planFunc plans a revision at now over the records it locked and read.
type planFunc func(now time.Time, locked, read map[string]*Record) (*Change, error)

// Supersede replaces record oldID by a new record built from in.
func (s *RevisionService) Supersede(ctx context.Context, oldID string, in RecordInput, a RevisionArgs) (*Record, error) {
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"oldId": oldID, "newRecord": in, "meta": meta}
	return s.created(s.reviseCreating(ctx, "supersede", args, a.IdempotencyKey, in.ID, []string{oldID}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return s.policy.Supersede(locked[oldID], in, meta, now)
	}))
}

// Fork derives a new record built from in from record sourceID, which stays.
func (s *RevisionService) Fork(ctx context.Context, sourceID string, in RecordInput, a RevisionArgs) (*Record, error) {
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"sourceId": sourceID, "newRecord": in, "meta": meta}
	return s.created(s.reviseCreating(ctx, "fork", args, a.IdempotencyKey, in.ID, []string{sourceID}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return s.policy.Fork(locked[sourceID], in, meta, now)
	}))
}

// Retract retracts record id.
func (s *RevisionService) Retract(ctx context.Context, id string, a RevisionArgs) (*Record, error) {
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"id": id, "meta": meta}
	return s.record(s.revise(ctx, "retract", args, a.IdempotencyKey, []string{id}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return Retract(locked[id], meta, now)
	}))
}

// Merge merges records ids into a new record built from in. Its
// ExpectedVersion is not used (each source has its own version).
func (s *RevisionService) Merge(ctx context.Context, ids []string, in RecordInput, a RevisionArgs) (*Record, error) {
	if err := ValidateMergeIDs(ids); err != nil {
		return nil, err
	}
	a.ExpectedVersion = nil
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"ids": ids, "mergedRecord": in, "meta": meta}
	return s.created(s.reviseCreating(ctx, "merge", args, a.IdempotencyKey, in.ID, ids, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		sources := make([]*Record, len(ids))
		for i, id := range ids {
			sources[i] = locked[id]
		}
		return s.policy.Merge(sources, in, meta, now)
	}))
}

// Contest marks record id contested by contestingRef (a record id, read
// when it names one the request sees in full, or an external reference).
func (s *RevisionService) Contest(ctx context.Context, id, contestingRef string, a RevisionArgs) (*Record, error) {
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"id": id, "contestingRef": contestingRef, "meta": meta}
	return s.record(s.revise(ctx, "contest", args, a.IdempotencyKey, []string{id}, []string{contestingRef}, func(now time.Time, locked, read map[string]*Record) (*Change, error) {
		return Contest(locked[id], contestingRef, read[contestingRef], meta, now)
	}))
}

// Reinforce raises record id's salience.
func (s *RevisionService) Reinforce(ctx context.Context, id string, a RevisionArgs) (*Record, error) {
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"id": id, "meta": meta}
	return s.record(s.revise(ctx, "reinforce", args, a.IdempotencyKey, []string{id}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return Reinforce(locked[id], meta, now)
	}))
}

// Penalize lowers record id's salience by amount.
func (s *RevisionService) Penalize(ctx context.Context, id string, amount float64, a RevisionArgs) (*Record, error) {
	meta := a.meta(TrustFromContext(ctx))
	args := map[string]any{"id": id, "amount": amount, "meta": meta}
	return s.record(s.revise(ctx, "penalize", args, a.IdempotencyKey, []string{id}, nil, func(now time.Time, locked, _ map[string]*Record) (*Change, error) {
		return Penalize(locked[id], amount, meta, now)
	}))
}

// record is the record of a revision's result.
func (s *RevisionService) record(r *Revised, err error) (*Record, error) {
	if err != nil {
		return nil, err
	}
	return r.Record, nil
}

// created is record for a revision that created r.Record: the new record
// is queued for its vector, so that a correction is found by its meaning
// as soon as the record it replaces was.
func (s *RevisionService) created(r *Revised, err error) (*Record, error) {
	if err != nil {
		return nil, err
	}
	s.embed.written(r.Record)
	return r.Record, nil
}

// revise runs one revision through the store with the request's clock
// reading and idempotency key, under the request's trust (see
// Trust.GuardPlan).
func (s *RevisionService) revise(ctx context.Context, op string, args any, key *string, lock, read []string, plan planFunc) (*Revised, error) {
	return s.reviseCreating(ctx, op, args, key, nil, lock, read, plan)
}

// reviseCreating is revise for a revision that creates a record whose id
// the client may have chosen (newID, when not nil): without a key, the id
// implies one.
func (s *RevisionService) reviseCreating(ctx context.Context, op string, args any, key, newID *string, lock, read []string, plan planFunc) (*Revised, error) {
	t := TrustFromContext(ctx)
	if err := t.CanWrite(); err != nil {
		return nil, err
	}
	var ids []string
	if newID != nil {
		ids = []string{*newID}
	}
	idem, err := RequestIdempotency(t, key, op, args, ids...)
	if err != nil {
		return nil, err
	}
	now := s.now()
	return s.store.Revise(ctx, idem, lock, read, t.GuardPlan(lock, func(locked, read map[string]*Record) (*Change, error) {
		return plan(now, locked, read)
	}))
}

// GuardPlan returns plan under t's write rules, for a store to run inside
// its transaction: every record it locks (lock) must be one t may revise,
// every record it reads must be in t's full view (an invisible one counts
// as missing and is left out, a redacted one is FORBIDDEN), and every
// record it creates must be one t may create.
func (t Trust) GuardPlan(lock []string, plan PlanFunc) PlanFunc {
	return func(locked, read map[string]*Record) (*Change, error) {
		for _, id := range lock {
			if err := t.CanRevise(locked[id]); err != nil {
				return nil, err
			}
		}
		visible := make(map[string]*Record, len(read))
		for id, rec := range read {
			switch t.Visibility(rec) {
			case Visible:
				visible[id] = rec
			case Redacted:
				return nil, Errorf(EFORBIDDEN, "record %q is above this request's sensitivity ceiling", id)
			}
		}
		c, err := plan(locked, visible)
		if err != nil {
			return nil, err
		}
		for _, rec := range c.Creates {
			if err := t.CanCreate(rec); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
}
