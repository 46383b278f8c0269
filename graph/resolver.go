// Package graph is Membrane's GraphQL transport: the schema, its resolvers
// and the HTTP handler. Resolvers validate and translate; the rules live in
// internal/membrane and the storage in internal/neo4j.
package graph

import (
	"log/slog"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
)

// Resolver is the root resolver; it holds the services resolvers call.
type Resolver struct {
	Store     membrane.RecordService
	Revisions membrane.RevisionService
	Lineages  membrane.LineageService
	// Deletes deletes records (deleteRecord).
	Deletes membrane.DeleteService
	// MetricsService computes the metrics query.
	MetricsService membrane.MetricsService
	// Jobs runs maintenance jobs on demand and lists their runs; nil when
	// the server runs none.
	Jobs      membrane.JobService
	Retrieval membrane.RetrievalService
	Captures  membrane.CaptureService
	// Events reads the change feed; Feed serves it to subscriptions (nil:
	// live updates off).
	Events membrane.EventService
	Feed   *feed.Hub
	Policy membrane.Policy
	// Embedder, when set, embeds captured records and retrieval queries.
	Embedder membrane.Embedder
	// EmbedMaxSensitivity is the most sensitive level whose records are
	// embedded ("": medium).
	EmbedMaxSensitivity membrane.Sensitivity
	// SelectionThreshold is the selection confidence below which a
	// selection needs more (0: membrane.DefaultSelectionThreshold).
	SelectionThreshold float64
	// Log receives warnings (nil: slog.Default()).
	Log *slog.Logger
	// Now is the clock.
	Now func() time.Time
}

func (r *Resolver) logger() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}
