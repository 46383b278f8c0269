package graph

// The batch loaders behind Record's lineage and relation fields: one round
// trip per field and asOf instant, however many records a page holds.

import (
	"context"
	"errors"
	"sync"
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

// chains returns each record's supersede chain, oldest first. Record.history
// and Record.current both need it: within one request they share one load
// per record (chainCache).
func (r *Resolver) chains(ctx context.Context, objs []*membrane.Record) ([][]*membrane.Record, error) {
	load := func(objs []*membrane.Record) (map[string][]*membrane.Record, error) {
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
	}
	if batches, _ := ctx.Value(siblingBatchesKey{}).(*siblingBatches); batches != nil {
		load = batches.chains.through(load)
	}
	byID, err := siblingLoad(ctx, objs, load)
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

// chainCache holds, for one request, the supersede chain of every record a
// field has loaded it for, by the record as the response holds it (which
// carries its asOf instant). The zero value is ready to use.
type chainCache struct {
	mu      sync.Mutex
	entries map[*membrane.Record]*chainEntry
}

// errChainLoad answers the fields that waited for a chain load that did not
// return.
var errChainLoad = errors.New("supersede chain load failed")

type chainEntry struct {
	done  chan struct{} // closed once chain and err are set
	chain []*membrane.Record
	err   error
}

// through returns load made to read the cache: it loads, in one call, only
// the records no field has asked for yet, and waits for those that another
// field's load in flight covers.
func (c *chainCache) through(load func([]*membrane.Record) (map[string][]*membrane.Record, error)) func([]*membrane.Record) (map[string][]*membrane.Record, error) {
	return func(objs []*membrane.Record) (map[string][]*membrane.Record, error) {
		var mine []*membrane.Record
		var owned []*chainEntry
		entries := make([]*chainEntry, len(objs))
		c.mu.Lock()
		if c.entries == nil {
			c.entries = map[*membrane.Record]*chainEntry{}
		}
		for i, o := range objs {
			e := c.entries[o]
			if e == nil {
				e = &chainEntry{done: make(chan struct{})}
				c.entries[o] = e
				mine, owned = append(mine, o), append(owned, e)
			}
			entries[i] = e
		}
		c.mu.Unlock()
		if len(mine) > 0 {
			func() {
				// Deferred, so that a load that panics (gqlgen recovers it)
				// still releases the fields waiting for these records.
				var got map[string][]*membrane.Record
				err := errChainLoad
				defer func() {
					for i, o := range mine {
						owned[i].chain, owned[i].err = got[o.ID], err
						close(owned[i].done)
					}
				}()
				got, err = load(mine)
			}()
		}
		out := make(map[string][]*membrane.Record, len(objs))
		for i, o := range objs {
			<-entries[i].done
			if err := entries[i].err; err != nil {
				return nil, err
			}
			out[o.ID] = entries[i].chain
		}
		return out, nil
	}
}
