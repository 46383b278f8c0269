package membrane

import (
	"context"
	"log/slog"
	"time"
)

// The application services (service_*.go) are the only way a transport
// writes: each takes the store ports it needs and owns the rules around
// them (the request's trust, idempotency keys, embedding), so a transport
// translates its input to a service call and the result back, and cannot
// reach a store without those rules. The stores (internal/neo4j) still gate
// every read by the request's trust: a service adds the write rules, it
// does not replace the read gate.

// Stores are the storage ports the services use. Implemented by the neo4j
// package; a nil port turns the operations that need it off (they answer
// NOT_IMPLEMENTED) where the server may run without it (Deletes, Metrics,
// Jobs, Feed).
type Stores struct {
	Records   RecordStore
	Revisions RevisionStore
	Lineages  LineageStore
	Captures  CaptureStore
	Retrieval RetrievalStore
	Deletes   DeleteStore
	Metrics   MetricsStore
	// Jobs runs maintenance jobs on demand; nil when the server runs none.
	Jobs JobRunner
	// Feed reads the change feed's head; nil when live updates are off.
	Feed FeedStore
	// Embeds stores the vectors of new records embedded in the
	// background (ServiceOptions.EmbedInBackground).
	Embeds EmbedStore
}

// ServiceOptions configure the services.
type ServiceOptions struct {
	Policy Policy
	// Embedder, when set, embeds new records and retrieval queries.
	Embedder Embedder
	// EmbedMaxSensitivity is the most sensitive level whose records are
	// embedded ("": medium).
	EmbedMaxSensitivity Sensitivity
	// EmbedInBackground embeds new records after their writes commit, in
	// batches, on a goroutine of the services' own (Stores.Embeds stores
	// the vectors; Services.Close stops it); false embeds them before the
	// write and stores each vector in its record's transaction.
	EmbedInBackground bool
	// VectorQueue is how many records may wait for their vectors in the
	// background (0: 10,000). Those a full queue turns away get theirs
	// from the embed job (Stores.Jobs), run once the queue has drained.
	VectorQueue int
	// SelectionThreshold is the selection confidence below which a
	// selection needs more (0: DefaultSelectionThreshold).
	SelectionThreshold float64
	// Log receives warnings (nil: slog.Default()).
	Log *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Services are the application services a transport calls.
type Services struct {
	Ingest   *IngestService
	Capture  *CaptureService
	Revise   *RevisionService
	Relate   *RelationService
	Outcomes *OutcomeService
	Delete   *DeleteService
	Jobs     *JobService
	Read     *ReadService
	// vectors embeds new records in the background; nil when it does not.
	vectors *vectorWriter
}

// NewServices returns the services over stores.
func NewServices(s Stores, o ServiceOptions) *Services {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.EmbedMaxSensitivity == "" {
		o.EmbedMaxSensitivity = SensitivityMedium
	}
	if o.SelectionThreshold <= 0 {
		o.SelectionThreshold = DefaultSelectionThreshold
	}
	e := embedding{embedder: o.Embedder, max: o.EmbedMaxSensitivity, log: o.Log}
	if o.EmbedInBackground && o.Embedder != nil && s.Embeds != nil {
		var catchUp func(context.Context)
		if s.Jobs != nil {
			catchUp = func(ctx context.Context) { embedJobNow(ctx, s.Jobs, o.Log) }
		}
		e.background = newVectorWriter(s.Embeds, o.Embedder, o.EmbedMaxSensitivity, o.VectorQueue, catchUp, o.Log)
	}
	rev := &RevisionService{store: s.Revisions, policy: o.Policy, now: o.Now, embed: e}
	return &Services{
		vectors:  e.background,
		Ingest:   &IngestService{store: s.Records, policy: o.Policy, embed: e, now: o.Now},
		Capture:  &CaptureService{store: s.Captures, policy: o.Policy, embed: e, now: o.Now},
		Revise:   rev,
		Relate:   &RelationService{revisions: rev},
		Outcomes: &OutcomeService{revisions: rev},
		Delete:   &DeleteService{store: s.Deletes, now: o.Now},
		Jobs:     &JobService{runner: s.Jobs},
		Read: &ReadService{records: s.Records, lineages: s.Lineages, retrieval: s.Retrieval, metrics: s.Metrics, feed: s.Feed,
			embed: e, threshold: o.SelectionThreshold, now: o.Now},
	}
}

// Close stops the services' background work: the records queued for
// their vectors are embedded and stored first, until ctx ends. Call it
// once no request is in flight, before the stores close.
func (s *Services) Close(ctx context.Context) error {
	if s.vectors == nil {
		return nil
	}
	return s.vectors.Close(ctx)
}

// RequestIdempotency returns the idempotency of a write by t's principal:
// the client's key namespaced by the principal, so that two principals'
// keys never collide or replay each other's results. Without one, a request
// that chooses the ids of the records it creates (ids) gets the key they
// imply, so that retrying it after OUTCOME_UNKNOWN is safe
// (ImpliedIdempotency).
func RequestIdempotency(t Trust, key *string, op string, args any, ids ...string) (*Idempotency, error) {
	actor := t.Principal.Actor
	if key == nil {
		return ImpliedIdempotency(actor, op, args, ids), nil
	}
	idem, err := NewIdempotency(key, op, args)
	if idem != nil {
		idem.Key = actor + "\x00" + idem.Key
	}
	return idem, err
}

// ReplayEdges returns the edges of a replayed result that t may see now:
// those whose ends are both records t sees (in full or redacted, as a read
// of relations shows them), by the ends as read now (ends; a record deleted
// since is absent). The first request's trust does not carry over: the
// principal's key may have been narrowed, or a record raised above its
// ceiling, since.
func (t Trust) ReplayEdges(edges []Relation, ends map[string]*Record) []Relation {
	out := make([]Relation, 0, len(edges))
	for _, e := range edges {
		src, tgt := ends[e.SourceID], ends[e.TargetID]
		if src != nil && tgt != nil && t.View(src) != nil && t.View(tgt) != nil {
			out = append(out, e)
		}
	}
	return out
}
