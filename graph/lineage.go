package graph

import (
	"context"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// revisionMeta returns the audit metadata of a revision: the principal is
// the actor, and the caller's free-text actor only adds detail.
func revisionMeta(ctx context.Context, actor, rationale *string, expectedVersion *int64) membrane.RevisionMeta {
	m := membrane.RevisionMeta{Actor: membrane.TrustFromContext(ctx).Principal.Actor, ExpectedVersion: expectedVersion}
	if actor != nil {
		m.ActorDetail = *actor
	}
	if rationale != nil {
		m.Rationale = *rationale
	}
	return m
}

// revise runs one revision through the revision service with the request's
// clock reading and idempotency key, under the request's trust: every record
// it reads must be in full view (an invisible one is not found, a redacted
// one forbidden), an optional record read that is invisible counts as
// missing, and every record it creates must be within the trust.
func (r *Resolver) revise(ctx context.Context, op string, args any, key *string, lock, read []string,
	plan func(now time.Time, locked, read map[string]*membrane.Record) (*membrane.Change, error)) (*membrane.Record, error) {
	return r.reviseCreating(ctx, op, args, key, nil, lock, read, plan)
}

// reviseCreating is revise for a revision that creates a record whose id
// the client may have chosen (newID, when not nil): without a key, the id
// implies one.
func (r *Resolver) reviseCreating(ctx context.Context, op string, args any, key, newID *string, lock, read []string,
	plan func(now time.Time, locked, read map[string]*membrane.Record) (*membrane.Change, error)) (*membrane.Record, error) {
	t := membrane.TrustFromContext(ctx)
	if err := t.CanWrite(); err != nil {
		return nil, err
	}
	var ids []string
	if newID != nil {
		ids = []string{*newID}
	}
	idem, err := idempotency(ctx, key, op, args, ids...)
	if err != nil {
		return nil, err
	}
	now := r.Now()
	return r.Revisions.Revise(ctx, idem, lock, read, func(locked, read map[string]*membrane.Record) (*membrane.Change, error) {
		for _, id := range lock {
			if err := t.CanRevise(locked[id]); err != nil {
				return nil, err
			}
		}
		visible := make(map[string]*membrane.Record, len(read))
		for id, rec := range read {
			switch t.Visibility(rec) {
			case membrane.Visible:
				visible[id] = rec
			case membrane.Redacted:
				return nil, membrane.Errorf(membrane.EFORBIDDEN, "record %q is above this request's sensitivity ceiling", id)
			}
		}
		c, err := plan(now, locked, visible)
		if err != nil {
			return nil, err
		}
		for _, rec := range c.Creates {
			if err := t.CanCreate(rec); err != nil {
				return nil, err
			}
		}
		return c, nil
	})
}

// asOfGroups splits a batch of parent records by the instant they were read
// as of (almost always one group), so each group is one round trip.
func asOfGroups(objs []*membrane.Record) map[string][]*membrane.Record {
	groups := map[string][]*membrane.Record{}
	for _, o := range objs {
		k := ""
		if o.AsOf != nil {
			k = o.AsOf.UTC().Format(time.RFC3339Nano)
		}
		groups[k] = append(groups[k], o)
	}
	return groups
}

func ids(objs []*membrane.Record) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.ID
	}
	return out
}

// neighbors loads the neighbours of a batch of records.
func (r *Resolver) neighbors(ctx context.Context, objs []*membrane.Record, q membrane.NeighborQuery) (map[string][]*membrane.Neighbor, error) {
	out := map[string][]*membrane.Neighbor{}
	for _, group := range asOfGroups(objs) {
		q.AsOf = group[0].AsOf
		got, err := r.Lineages.Neighbors(ctx, ids(group), q)
		if err != nil {
			return nil, err
		}
		for id, ns := range got {
			for _, n := range ns {
				n.Record.AsOf = q.AsOf
			}
			out[id] = ns
		}
	}
	return out, nil
}

// related returns, per record, its neighbours over one lineage predicate.
func (r *Resolver) related(ctx context.Context, objs []*membrane.Record, p membrane.Predicate, dir membrane.Direction) ([][]*membrane.Record, error) {
	byID, err := r.neighbors(ctx, objs, membrane.NeighborQuery{
		Predicates: []membrane.Predicate{p}, Direction: dir, Page: membrane.Page{First: membrane.MaxNeighbors},
	})
	if err != nil {
		return nil, err
	}
	out := make([][]*membrane.Record, len(objs))
	for i, o := range objs {
		list := []*membrane.Record{}
		for j, n := range byID[o.ID] {
			if j == membrane.MaxNeighbors {
				break
			}
			list = append(list, n.Record)
		}
		out[i] = list
	}
	return out, nil
}

// chains returns each record's supersede chain, oldest first.
func (r *Resolver) chains(ctx context.Context, objs []*membrane.Record) ([][]*membrane.Record, error) {
	byID := map[string][]*membrane.Record{}
	for _, group := range asOfGroups(objs) {
		asOf := group[0].AsOf
		got, err := r.Lineages.SupersedeChains(ctx, ids(group), asOf)
		if err != nil {
			return nil, err
		}
		for id, chain := range got {
			for _, c := range chain {
				c.AsOf = asOf
			}
			byID[id] = chain
		}
	}
	out := make([][]*membrane.Record, len(objs))
	for i, o := range objs {
		out[i] = byID[o.ID]
		if out[i] == nil {
			out[i] = []*membrane.Record{}
		}
	}
	return out, nil
}

// storedRelation reads the edge sourceID -predicate-> targetID as stored
// (an idempotent replay answers with what the first request wrote),
// paging through the source's edges of that predicate.
func (r *Resolver) storedRelation(ctx context.Context, sourceID string, predicate membrane.Predicate, targetID string) (*membrane.Relation, error) {
	q := membrane.NeighborQuery{Predicates: []membrane.Predicate{predicate}, Direction: membrane.DirOut,
		Page: membrane.Page{First: membrane.MaxNeighbors}}
	for {
		byID, err := r.Lineages.Neighbors(ctx, []string{sourceID}, q)
		if err != nil {
			return nil, err
		}
		ns := byID[sourceID]
		for i, n := range ns {
			if i == q.Page.First {
				break // the one read past the page
			}
			if n.Relation.TargetID == targetID {
				return n.Relation, nil
			}
		}
		if len(ns) <= q.Page.First {
			return nil, membrane.Errorf(membrane.ECONFLICT, "the relation this idempotency key created no longer exists")
		}
		if q.Page.After, err = membrane.DecodeCursor(ns[q.Page.First-1].Cursor); err != nil {
			return nil, err
		}
	}
}
