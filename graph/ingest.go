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
		idem, err := membrane.NewIdempotency(key, op, input)
		if err != nil {
			return nil, err
		}
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
	idem, err := membrane.NewIdempotency(key, "createRecords", map[string]any{"inputs": inputs, "actor": actor})
	if err != nil {
		return nil, err
	}
	who := "api"
	if actor != nil && *actor != "" {
		if len(*actor) > 256 {
			return nil, membrane.Errorf(membrane.EINVALID, "actor exceeds 256 bytes")
		}
		who = *actor
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
		if j, dup := seen[rec.ID]; dup {
			return nil, membrane.Errorf(membrane.EINVALID, "%s[%d] and %s[%d] have the same id", field, j, field, i)
		}
		seen[rec.ID] = i
		batch[i] = &membrane.Ingested{Record: rec, Audit: membrane.NewAuditEntry(rec.ID, membrane.AuditCreate, who, "Created "+string(rec.Type)+" record", now)}
	}
	return r.Store.CreateRecords(ctx, idem, batch)
}
