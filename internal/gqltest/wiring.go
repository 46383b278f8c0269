// Package gqltest is the GraphQL test client of Membrane's tests: it starts
// an API server in process over the real test Neo4j (see neo4jtest), posts
// queries with the API key of one principal, decodes data, errors and
// extensions, sends raw HTTP requests, and opens subscriptions over
// WebSocket (graphql-transport-ws) and server-sent events. It is imported
// by tests only.
package gqltest

import (
	"log/slog"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// Wiring is what a test server's resolver is built from, as internal/app
// builds it: the services' stores and options, and the change feed. Setups
// change it before the server starts (to add optional stores such as
// deletes or metrics, an embedder, or the feed).
type Wiring struct {
	// DB is the store behind every port.
	DB      *neo4j.DB
	Stores  membrane.Stores
	Options membrane.ServiceOptions
	Feed    *feed.Hub
	// Services are the services Resolver built last (a test that embeds in
	// the background closes them to have the vectors written).
	Services *membrane.Services
}

// NewWiring wires the services every test server has over db: records,
// revisions, lineage, retrieval and capture (deletes, metrics and jobs are
// optional).
func NewWiring(db *neo4j.DB, log *slog.Logger) *Wiring {
	return &Wiring{DB: db,
		Stores:  membrane.Stores{Records: db, Revisions: db, Lineages: db, Retrieval: db, Captures: db, Embeds: db},
		Options: membrane.ServiceOptions{Policy: membrane.DefaultPolicy(), Now: time.Now, Log: log}}
}

// Resolver builds the resolver.
func (w *Wiring) Resolver() *graph.Resolver {
	w.Services = membrane.NewServices(w.Stores, w.Options)
	return &graph.Resolver{Services: w.Services, Feed: w.Feed}
}
