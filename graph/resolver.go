// Package graph is Membrane's GraphQL layer: the schema, its resolvers,
// the batch loaders of nested fields, the cost model and query limits, and
// error presentation. Resolvers validate and translate GraphQL to calls of
// the application services (internal/membrane) and their results back; the
// rules live in the services, the storage in internal/neo4j, and the HTTP
// handler that serves the schema in internal/http.
package graph

import (
	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
)

// Resolver is the root resolver; it holds the services resolvers call.
type Resolver struct {
	// Services are the application services (membrane.NewServices).
	Services *membrane.Services
	// Feed serves the change feed to subscriptions (nil: live updates
	// off).
	Feed *feed.Hub
}
