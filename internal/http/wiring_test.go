package http_test

import (
	"log/slog"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// wiring is what a test server's resolver is built from, as internal/app
// builds it: the services' stores and options, and the change feed. Setups
// change it before the server starts (to add optional stores such as
// deletes or metrics, an embedder, or the feed).
type wiring struct {
	// DB is the store behind every port.
	DB      *neo4j.DB
	Stores  membrane.Stores
	Options membrane.ServiceOptions
	Feed    *feed.Hub
}

// newWiring wires the services every test server has over db: records,
// revisions, lineage, retrieval and capture (deletes, metrics and jobs are
// optional).
func newWiring(db *neo4j.DB, log *slog.Logger) *wiring {
	return &wiring{DB: db,
		Stores:  membrane.Stores{Records: db, Revisions: db, Lineages: db, Retrieval: db, Captures: db},
		Options: membrane.ServiceOptions{Policy: membrane.DefaultPolicy(), Now: time.Now, Log: log}}
}

// resolver builds the resolver.
func (w *wiring) resolver() *graph.Resolver {
	return &graph.Resolver{Services: membrane.NewServices(w.Stores, w.Options), Feed: w.Feed}
}
