package graph

import (
	"context"
	"strconv"

	"github.com/membrane/membrane/internal/membrane"
)

// ingest returns a function that stores one built record, so resolvers read
// as r.ingest(ctx, op, input, key)(r.Policy.BuildX(input, now)).
func (r *Resolver) ingest(ctx context.Context, op string, input any, key *string) func(*membrane.Ingested, error) (*membrane.Record, error) {
	return func(in *membrane.Ingested, err error) (*membrane.Record, error) {
		if err != nil {
			return nil, err
		}
		t := membrane.TrustFromContext(ctx)
		if err := t.CanCreate(in.Record); err != nil {
			return nil, err
		}
		// The audit names the authenticated principal; the input's source
		// (which agent or tool produced it) is kept as detail.
		in.Audit.Actor, in.Audit.ActorDetail = t.Principal.Actor, in.Audit.Actor
		idem, err := idempotency(ctx, key, op, input)
		if err != nil {
			return nil, err
		}
		r.embedIngested(ctx, []*membrane.Ingested{in})
		recs, err := r.Store.CreateRecords(ctx, idem, []*membrane.Ingested{in})
		if err != nil {
			return nil, err
		}
		return recs[0], nil
	}
}

// createRecords builds and validates every input, then writes them all in
// one transaction. Field errors of a batch are prefixed with the input's
// index under field, so a client finds the bad record.
func (r *Resolver) createRecords(ctx context.Context, inputs []*membrane.RecordInput, actor, key *string, field string) ([]*membrane.Record, error) {
	t := membrane.TrustFromContext(ctx)
	if err := t.CanWrite(); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(inputs))
	for _, in := range inputs {
		if in.ID != nil {
			ids = append(ids, *in.ID)
		}
	}
	idem, err := idempotency(ctx, key, "createRecords", map[string]any{"inputs": inputs, "actor": actor}, ids...)
	if err != nil {
		return nil, err
	}
	detail := ""
	if actor != nil {
		if len(*actor) > 256 {
			return nil, membrane.Errorf(membrane.EINVALID, "actor exceeds 256 bytes")
		}
		detail = *actor
	}
	now := r.Now()
	batch := make([]*membrane.Ingested, len(inputs))
	seen := make(map[string]int, len(inputs))
	for i, in := range inputs {
		rec, err := r.Policy.BuildRecord(*in, now)
		if err != nil {
			if field != "" {
				return nil, membrane.PrefixFields(err, field+"["+strconv.Itoa(i)+"].")
			}
			return nil, err
		}
		if err := t.CanCreate(rec); err != nil {
			if field != "" {
				return nil, membrane.Errorf(membrane.EFORBIDDEN, "%s[%d]: %s", field, i, membrane.ErrorMessage(err))
			}
			return nil, err
		}
		if j, dup := seen[rec.ID]; dup {
			return nil, membrane.Errorf(membrane.EINVALID, "%s[%d] and %s[%d] have the same id", field, j, field, i)
		}
		seen[rec.ID] = i
		audit := membrane.NewAuditEntry(rec.ID, membrane.AuditCreate, t.Principal.Actor, "Created "+string(rec.Type)+" record", now)
		audit.ActorDetail = detail
		batch[i] = &membrane.Ingested{Record: rec, Audit: audit}
	}
	r.embedIngested(ctx, batch)
	return r.Store.CreateRecords(ctx, idem, batch)
}

// idempotency returns the request's idempotency key, namespaced by the
// principal so that two principals' keys never collide or replay each
// other's results. Without one, a request that chooses the ids of the
// records it creates (ids) gets the key they imply, so that retrying it
// after OUTCOME_UNKNOWN is safe (membrane.ImpliedIdempotency).
func idempotency(ctx context.Context, key *string, op string, args any, ids ...string) (*membrane.Idempotency, error) {
	actor := membrane.TrustFromContext(ctx).Principal.Actor
	if key == nil {
		return membrane.ImpliedIdempotency(actor, op, args, ids), nil
	}
	idem, err := membrane.NewIdempotency(key, op, args)
	if idem != nil {
		idem.Key = actor + "\x00" + idem.Key
	}
	return idem, err
}
