package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/embedding"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
)

// This file is the one place that builds the resolver and the HTTP
// handler: what the transport and the services are constructed from.

// openHTTP builds the resolver, the GraphQL handler with its middleware,
// the HTTP server and, when metrics have a listener of their own, the
// metrics server.
func (m *Main) openHTTP(ctx context.Context) error {
	resolver, err := m.newResolver(ctx)
	if err != nil {
		return err
	}
	opts, err := handlerOptions(m.cfg)
	if err != nil {
		return err
	}
	m.handler.graphiQL, m.handler.explorer, m.handler.introspection, m.handler.allowList = opts.GraphiQL, opts.Explorer, opts.Introspection, opts.AllowList != nil
	obs := membranehttp.Observability{Log: m.log, Metrics: m.metrics, ServeMetrics: m.metrics != nil && m.cfg.MetricsListen == ""}
	if m.tp != nil {
		obs.Tracer = m.tp
	}
	m.srv = m.newHTTPServer(membranehttp.Observe(membranehttp.NewHandler(resolver, m.db, m.keys, m.log, opts), obs))
	if m.metrics != nil && m.cfg.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", m.metrics.Handler())
		m.metricsSrv = &http.Server{Addr: m.cfg.MetricsListen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	}
	return nil
}

// listeningAttrs are what the "membrane listening" line says.
func (m *Main) listeningAttrs() []any {
	base := m.baseURL()
	return []any{"mode", m.cfg.Mode, "graphiql", m.handler.graphiQL, "explorer", m.handler.explorer, "introspection", m.handler.introspection,
		"url", base + "/", "graphql", base + "/graphql", "mcp", base + mcp.Path, "allow_list", m.handler.allowList}
}

// newResolver builds the GraphQL resolver over the store, the jobs and
// the feed, with vector search when an embedding endpoint is configured.
func (m *Main) newResolver(ctx context.Context) (*graph.Resolver, error) {
	db := m.db
	stores := membrane.Stores{Records: db, Revisions: db, Lineages: db, Deletes: db, Metrics: db, Jobs: m.runner, Retrieval: db, Captures: db, Feed: db,
		Embeds: db}
	opts := membrane.ServiceOptions{Policy: m.policy, SelectionThreshold: m.cfg.SelectionConfidenceThreshold, Log: m.log, Now: time.Now}
	if m.emb != nil {
		opts.Embedder, opts.EmbedMaxSensitivity = m.emb, membrane.Sensitivity(m.cfg.Embedding.MaxSensitivity)
		opts.EmbedInBackground = m.cfg.Embedding.Background
	}
	m.services = membrane.NewServices(stores, opts)
	return &graph.Resolver{Services: m.services, Feed: m.hub}, nil
}

// openEmbedder finds the embedding model (embedding.provider) and makes
// sure the database has the vector index of its dimensions; m.emb stays
// nil for full text only.
func (m *Main) openEmbedder(ctx context.Context) error {
	emb, on, err := m.embedder(ctx)
	if err != nil || !on {
		return err
	}
	if err := m.db.EnsureVectorIndex(ctx, emb.Dimensions()); err != nil {
		return err
	}
	m.emb = emb
	m.log.Info("vector search on", "model", emb.Model(), "dimensions", emb.Dimensions(), "max_sensitivity", m.cfg.Embedding.MaxSensitivity)
	return nil
}

// embedder is the configured embedding model (embedding.provider); on is
// false for full text only. With auto and no endpoint, a Neo4j without the
// embedding plugin (or whose model cannot run) leaves vector search off
// with a warning rather than failing the start; with neo4j it fails it.
func (m *Main) embedder(ctx context.Context) (emb membrane.Embedder, on bool, err error) {
	e := m.cfg.Embedding
	switch {
	case e.UsesEndpoint():
		c, err := embedding.New(embedding.Config{Endpoint: e.Endpoint, Model: e.Model, APIKey: e.APIKey,
			Dimensions: e.Dimensions, SendDimensions: e.SendDimensions, Timeout: e.Timeout})
		return c, err == nil, err
	case !e.MayUseNeo4j():
		m.log.Info("vector search off (embedding.provider off): full text only")
		return nil, false, nil
	}
	in, err := m.db.InDatabaseEmbedder(ctx)
	switch {
	case err == nil:
		return in, true, nil
	case e.Provider == config.EmbedNeo4j:
		return nil, false, fmt.Errorf("embedding.provider neo4j: %w", err)
	}
	m.log.Warn("vector search off: full text only", "reason", err)
	return nil, false, nil
}

// newHTTPServer returns the GraphQL server. Its shutdown hook runs once
// Shutdown has closed its listeners: it closes draining, which tells
// shutdown it ran (so that the steps are logged in order), and ends every
// subscription.
func (m *Main) newHTTPServer(h http.Handler) *http.Server {
	srv := &http.Server{
		Addr:              m.cfg.Listen,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Not ReadTimeout, which would also cut the reads of SSE streams
		// and WebSockets: the handler bounds reading each body instead
		// (read_timeout).
		IdleTimeout: m.cfg.IdleTimeout,
	}
	m.draining = make(chan struct{})
	srv.RegisterOnShutdown(func() {
		m.log.Info("shutdown: listener closed, draining in-flight requests and ending subscriptions")
		close(m.draining)
		// http.Server.Shutdown does not wait for hijacked WebSocket
		// connections and would wait for SSE streams for ever: end every
		// subscription now. Each gets "complete"; its client reconnects
		// (to another replica) and resumes from its last cursor.
		m.hub.Close()
	})
	return srv
}

// handlerOptions maps the configuration onto the HTTP handler's options.
func handlerOptions(cfg config.Config) (membranehttp.HandlerOptions, error) {
	o := membranehttp.HandlerOptions{
		GraphiQL: cfg.GraphiQLOn(), Explorer: cfg.ExplorerOn(), Introspection: cfg.IntrospectionOn(),
		Limits: map[membrane.Role]graph.QueryLimits{}, RateLimits: map[membrane.Role]membranehttp.RateLimit{},
		ParserTokenLimit: cfg.Limits.Tokens, RateLimitActors: cfg.Limits.RateLimitActors, PrincipalConcurrency: cfg.Limits.Concurrency,
		BodyBytesPerSecond: cfg.Limits.BodyBytesPerSecond,
		RequestTimeout:     cfg.RequestTimeout, ReadTimeout: cfg.ReadTimeout, MaxBodyBytes: cfg.MaxBodyBytes, APQCacheSize: cfg.PersistedQueries.CacheSize,
		Version: version(),
		CORS: membranehttp.CORSOptions{AllowedOrigins: cfg.CORS.AllowedOrigins, AllowedMethods: cfg.CORS.AllowedMethods,
			AllowedHeaders: cfg.CORS.AllowedHeaders, AllowCredentials: cfg.CORS.AllowCredentials, MaxAge: cfg.CORS.MaxAge},
	}
	for _, role := range []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin} {
		l := cfg.LimitsFor(role)
		o.Limits[role] = graph.QueryLimits{Complexity: l.Complexity, Depth: l.Depth, RootFields: l.RootFields}
		o.RateLimits[role] = membranehttp.RateLimit{Rate: l.Rate, Burst: l.Burst}
	}
	if path := cfg.PersistedQueries.AllowList; path != "" {
		ops, err := membranehttp.LoadAllowList(path)
		if err != nil {
			return o, err
		}
		o.AllowList = ops
	}
	return o, nil
}
