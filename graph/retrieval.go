package graph

import (
	"context"
	"slices"

	"github.com/membrane/membrane/internal/membrane"
)

// selectionThreshold is the configured selection confidence threshold.
func (r *Resolver) selectionThreshold() float64 {
	if r.SelectionThreshold > 0 {
		return r.SelectionThreshold
	}
	return membrane.DefaultSelectionThreshold
}

// embedQuery returns the query's embedding, or nil without an embedder or
// query, or when embedding fails (retrieval then ranks by full text alone
// and says so in vectorUsed).
func (r *Resolver) embedQuery(ctx context.Context, text string) []float64 {
	if r.Embedder == nil || text == "" {
		return nil
	}
	vecs, err := r.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vecs) != 1 {
		r.logger().WarnContext(ctx, "query embedding failed; ranking by full text only", "err", err)
		return nil
	}
	return vecs[0]
}

// capture runs captureMemory under the request's trust: the principal must
// write, and the capture's records (all of its scope and sensitivity) must
// be within its trust; entities are only reused when seen in full.
func (r *Resolver) capture(ctx context.Context, in membrane.CaptureInput, key *string) (*membrane.Captured, error) {
	t := membrane.TrustFromContext(ctx)
	if err := t.CanWrite(); err != nil {
		return nil, err
	}
	idem, err := idempotency(ctx, key, "captureMemory", in)
	if err != nil {
		return nil, err
	}
	c, err := r.Policy.BuildCapture(in, r.Now())
	if err != nil {
		return nil, membrane.PrefixFields(err, "input.")
	}
	if err := t.CanCreate(c.Primary); err != nil {
		return nil, err
	}
	r.embedCapture(ctx, c)
	res, err := r.Captures.Capture(ctx, idem, c, t.Principal.Actor)
	if err != nil || !res.Replayed {
		return res, err
	}
	// A replay: the edges are those the first request wrote from its records.
	recs := append([]*membrane.Record{res.Primary}, res.Created...)
	byID, err := r.Lineages.Neighbors(ctx, ids(recs), membrane.NeighborQuery{
		Predicates: []membrane.Predicate{membrane.PredMentions, membrane.PredAbout, membrane.PredDerivedFrom},
		Direction:  membrane.DirOut, Page: membrane.Page{First: membrane.MaxNeighbors},
	})
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		for _, n := range byID[rec.ID] {
			if n.Relation.CreatedAt.Equal(res.Primary.CreatedAt) && !slices.ContainsFunc(res.Edges, func(e membrane.Relation) bool {
				return e == *n.Relation
			}) {
				res.Edges = append(res.Edges, *n.Relation)
			}
		}
	}
	return res, nil
}
