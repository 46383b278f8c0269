package graph

// The batch loaders behind Record's lineage and relation fields: one round
// trip per field and asOf instant, however many records a page holds.

import (
	"context"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

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

// neighbors loads the neighbours of a batch of records (and of their
// siblings, see siblingLoad).
func (r *Resolver) neighbors(ctx context.Context, objs []*membrane.Record, q membrane.NeighborQuery) (map[string]*membrane.NeighborPage, error) {
	return siblingLoad(ctx, objs, func(objs []*membrane.Record) (map[string]*membrane.NeighborPage, error) {
		out := map[string]*membrane.NeighborPage{}
		for _, group := range asOfGroups(objs) {
			q.AsOf = group[0].AsOf
			got, err := r.Services.Read.Neighbors(ctx, ids(group), q)
			if err != nil {
				return nil, err
			}
			for id, page := range got {
				out[id] = page
			}
		}
		return out, nil
	})
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
		if page := byID[o.ID]; page != nil {
			for _, n := range page.Items {
				list = append(list, n.Record)
			}
		}
		out[i] = list
	}
	return out, nil
}

// chains returns each record's supersede chain, oldest first.
func (r *Resolver) chains(ctx context.Context, objs []*membrane.Record) ([][]*membrane.Record, error) {
	byID, err := siblingLoad(ctx, objs, func(objs []*membrane.Record) (map[string][]*membrane.Record, error) {
		byID := map[string][]*membrane.Record{}
		for _, group := range asOfGroups(objs) {
			got, err := r.Services.Read.SupersedeChains(ctx, ids(group), group[0].AsOf)
			if err != nil {
				return nil, err
			}
			for id, chain := range got {
				byID[id] = chain
			}
		}
		return byID, nil
	})
	if err != nil {
		return nil, err
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
