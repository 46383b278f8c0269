// Package graph is Membrane's GraphQL transport: the schema, its resolvers
// and the HTTP handler. Resolvers validate and translate; the rules live in
// internal/membrane and the storage in internal/neo4j.
package graph

import (
	"time"

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
	Jobs   membrane.JobService
	Policy membrane.Policy
	// Now is the clock.
	Now func() time.Time
}
