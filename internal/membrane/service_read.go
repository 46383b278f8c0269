package membrane

import (
	"context"
	"slices"
	"time"
)

// ReadService answers the read paths. The stores gate every read by the
// request's trust; this service adds what reads need besides the store:
// the query's embedding and the clock for retrieval, and the gate of
// provenance sources.
type ReadService struct {
	records   RecordStore
	lineages  LineageStore
	retrieval RetrievalStore
	metrics   MetricsStore
	feed      FeedStore
	embed     embedding
	threshold float64
	now       func() time.Time
}

// Record returns record id, as of asOf when set (NOT_FOUND when missing or
// invisible).
func (s *ReadService) Record(ctx context.Context, id string, asOf *time.Time) (*Record, error) {
	if asOf == nil {
		return s.records.FindRecordByID(ctx, id)
	}
	rec, err := s.lineages.FindRecordAsOf(ctx, id, *asOf)
	if err != nil {
		return nil, err
	}
	rec.AsOf = asOf
	return rec, nil
}

// Records returns a keyset page of the records filter selects.
func (s *ReadService) Records(ctx context.Context, filter RecordFilter, order RecordOrder, page Page) (*RecordPage, error) {
	return s.records.FindRecords(ctx, filter, order, page)
}

// CountRecords counts the records filter selects.
func (s *ReadService) CountRecords(ctx context.Context, filter RecordFilter) (int64, error) {
	return s.records.CountRecords(ctx, filter)
}

// AuditLog returns a page of audit entries in filter.Order (oldest first
// by default).
func (s *ReadService) AuditLog(ctx context.Context, filter AuditFilter, page Page) (*AuditPage, error) {
	if filter.Order != "" && !filter.Order.Valid() {
		return nil, Errorf(EINVALID, "order must be OLDEST_FIRST or NEWEST_FIRST")
	}
	return s.records.FindAuditEntries(ctx, filter, page)
}

// AuditPages returns one page of audit entries per record id, in order.
func (s *ReadService) AuditPages(ctx context.Context, ids []string, order AuditOrder, page Page) (map[string]*AuditPage, error) {
	if order != "" && !order.Valid() {
		return nil, Errorf(EINVALID, "order must be OLDEST_FIRST or NEWEST_FIRST")
	}
	return s.records.AuditPagesForRecords(ctx, ids, order, page)
}

// Provenance returns each record's provenance with only the sources the
// request may know of (Trust.GateProvenance), in one round trip.
func (s *ReadService) Provenance(ctx context.Context, recs []*Record) ([]*Provenance, error) {
	var refs []string
	for _, r := range recs {
		if p := r.ShownProvenance(); p != nil {
			for _, src := range p.Sources {
				refs = append(refs, src.Ref)
			}
		}
	}
	slices.Sort(refs)
	at, err := s.records.LocateRecords(ctx, slices.Compact(refs))
	if err != nil {
		return nil, err
	}
	t := TrustFromContext(ctx)
	out := make([]*Provenance, len(recs))
	for i, r := range recs {
		out[i] = t.GateProvenance(r.ShownProvenance(), at)
	}
	return out, nil
}

// Lineage returns the bounded lineage graph of record id; its records are
// as of q.AsOf.
func (s *ReadService) Lineage(ctx context.Context, id string, q LineageQuery) (*Lineage, error) {
	lin, err := s.lineages.Lineage(ctx, id, q)
	if err != nil {
		return nil, err
	}
	for _, n := range lin.Nodes {
		n.Record.AsOf = q.AsOf
	}
	return lin, nil
}

// Graph returns the drawable graph around q.Roots; its records are as of
// q.AsOf. The store gates it by the request's trust as it gates lineage:
// invisible records and their edges are absent, one level above the
// ceiling shows redacted, and an invisible root is NOT_FOUND.
func (s *ReadService) Graph(ctx context.Context, q ExportQuery) (*Lineage, error) {
	g, err := s.lineages.Graph(ctx, q)
	if err != nil {
		return nil, err
	}
	for _, n := range g.Nodes {
		n.Record.AsOf = q.AsOf
	}
	return g, nil
}

// Neighbors returns, for each id, the page q.Page of its neighbours, as of
// q.AsOf.
func (s *ReadService) Neighbors(ctx context.Context, ids []string, q NeighborQuery) (map[string]*NeighborPage, error) {
	out, err := s.lineages.Neighbors(ctx, ids, q)
	if err != nil {
		return nil, err
	}
	for _, page := range out {
		for _, n := range page.Items {
			n.Record.AsOf = q.AsOf
		}
	}
	return out, nil
}

// SupersedeChains returns, for each id, its supersede chain oldest first,
// as of asOf.
func (s *ReadService) SupersedeChains(ctx context.Context, ids []string, asOf *time.Time) (map[string][]*Record, error) {
	out, err := s.lineages.SupersedeChains(ctx, ids, asOf)
	if err != nil {
		return nil, err
	}
	for _, chain := range out {
		for _, r := range chain {
			r.AsOf = asOf
		}
	}
	return out, nil
}

// Retrieve ranks records for q, by its embedding too when there is an
// embedder.
func (s *ReadService) Retrieve(ctx context.Context, q RetrieveQuery) (*Retrieval, error) {
	var warning string
	q.Vector, warning = s.embed.query(ctx, q.Text)
	q.Now = s.now()
	r, err := s.retrieval.Retrieve(ctx, q, s.threshold)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		r.Warnings = append(r.Warnings, warning)
	}
	return r, nil
}

// RetrieveGraph ranks roots for g.Roots and expands their neighbourhood.
func (s *ReadService) RetrieveGraph(ctx context.Context, g GraphQuery) (*GraphRetrieval, error) {
	// The graph's result has no place for a warning: vectorUsed-less
	// roots are ranked by full text, as logged.
	g.Roots.Vector, _ = s.embed.query(ctx, g.Roots.Text)
	g.Roots.Now = s.now()
	return s.retrieval.RetrieveGraph(ctx, g, s.threshold)
}

// Metrics aggregates over the records the request sees (in scopes, when
// not nil). NOT_IMPLEMENTED when the server computes none.
func (s *ReadService) Metrics(ctx context.Context, scopes []string) (*Metrics, error) {
	if s.metrics == nil {
		return nil, Errorf(ENOTIMPLEMENTED, "metrics are not configured on this server")
	}
	return s.metrics.Metrics(ctx, TrustFromContext(ctx), scopes, s.now())
}

// ChangeCursor returns the cursor of the change feed's head: a
// subscription that starts after it gets every change made from now on.
// NOT_IMPLEMENTED when live updates are off.
func (s *ReadService) ChangeCursor(ctx context.Context) (string, error) {
	if s.feed == nil {
		return "", ErrNoFeed
	}
	head, err := s.feed.FeedHead(ctx)
	if err != nil {
		return "", err
	}
	return EventCursor(head.Seq), nil
}
