// Command membrane serves the Membrane GraphQL API over a Neo4j store.
// It only wires: configuration, the Neo4j store, the maintenance jobs, the
// GraphQL handler.
package main

//go:generate go run github.com/99designs/gqlgen generate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/embedding"
	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/logging"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/metrics"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/safego"
	"github.com/membrane/membrane/internal/tracing"
)

// Usage:
//
//	membrane [flags]                 serve (see README for flags and environment)
//	membrane hash-key < key          print the SHA-256 to configure for an API key
//	membrane reseal -key ID [flags]  re-encrypt values sealed with key ID under the active key
func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "hash-key":
		err = hashKey()
	case len(os.Args) > 1 && os.Args[1] == "reseal":
		err = reseal(os.Args[2:])
	default:
		err = run(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "membrane:", err)
		os.Exit(1)
	}
}

func hashKey() error {
	key, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	fmt.Println(membrane.HashKey(strings.TrimSpace(string(key))))
	return nil
}

func reseal(args []string) error {
	fs := flag.NewFlagSet("reseal", flag.ContinueOnError)
	keyID := fs.String("key", "", "id of the encryption key to retire")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keyID == "" {
		return errors.New("reseal: -key is required")
	}
	cfg, err := config.Load(fs.Args(), os.Getenv)
	if err != nil {
		return err
	}
	if len(cfg.Encryption.Keys) == 0 {
		return errors.New("reseal: no encryption keys configured (MEMBRANE_ENCRYPTION_KEY)")
	}
	db, err := openStore(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("reseal"))
	recs, audits, err := db.Reseal(ctx, *keyID)
	fmt.Printf("resealed %d records and %d audit entries from key %q to key %q\n", recs, audits, *keyID, cfg.Encryption.ActiveKey)
	return err
}

// openStore connects to Neo4j as configured, reporting its transactions to
// observers, and applies the schema.
func openStore(ctx context.Context, cfg config.Config, observers ...neo4j.Observer) (*neo4j.DB, error) {
	sealer, err := cfg.Sealer()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	db, err := neo4j.Open(ctx, neo4j.Config{
		URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database,
		MaxPoolSize: cfg.Neo4j.MaxPoolSize, TxTimeout: cfg.Neo4j.TxTimeout, Sealer: sealer, Observers: observers,
	})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close(context.Background())
		return nil, err
	}
	return db, nil
}

func run(args []string) error {
	cfg, err := config.Load(args, os.Getenv)
	if err != nil {
		return err
	}
	level, err := logging.ParseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	log := logging.New(os.Stderr, cfg.LogFormat, level)
	safego.Report(log, nil)
	policy, err := cfg.Policy()
	if err != nil {
		return err
	}
	keys, err := cfg.Keyring()
	if err != nil {
		return err
	}
	if len(cfg.Encryption.Keys) == 0 {
		log.Warn("no encryption key configured (MEMBRANE_ENCRYPTION_KEY): records of sensitivity " + cfg.Encryption.From +
			" and above will be refused rather than stored in clear")
	}
	if keys.Open() {
		log.Warn("NO API KEYS CONFIGURED: running in open development mode; every request is an admin " +
			"that sees every record. Configure api_keys (or MEMBRANE_API_KEYS / MEMBRANE_API_KEYS_FILE) before exposing this server.")
	}
	jobsCfg, err := cfg.JobsConfig()
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Observers of the store and the jobs: metrics unless disabled, spans
	// only when tracing is configured (off, nothing is set up at all).
	var storeObs []neo4j.Observer
	var m *metrics.Metrics
	if cfg.MetricsEnabled {
		m = metrics.New()
		safego.Report(log, m.PanicRecovered)
		storeObs = append(storeObs, m)
		jobsCfg.Observers = append(jobsCfg.Observers, m)
	}
	var tp *tracing.Provider
	if cfg.TracingEnabled() {
		if tp, err = tracing.New(ctx, cfg.OTelEndpoint, version()); err != nil {
			return err
		}
		// Export failures are the exporter's to retry; log them as ours.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
		tracer := tp.Tracer(tracing.Name)
		storeObs = append(storeObs, tracing.Store{Tracer: tracer})
		jobsCfg.Observers = append(jobsCfg.Observers, tracing.Jobs{Tracer: tracer})
		endpoint := "from OTEL_EXPORTER_OTLP_* variables"
		if u, err := url.Parse(cfg.OTelEndpoint); err == nil && cfg.OTelEndpoint != "" {
			endpoint = u.Redacted() // a URL may hold credentials
		}
		log.Info("tracing on", "otel_endpoint", endpoint)
	}

	log.Info("connecting to neo4j", "uri", cfg.Neo4j.URI, "database", cfg.Neo4j.Database)
	db, err := openStore(ctx, cfg, storeObs...)
	if err != nil {
		return err
	}
	if migrated, skipped := db.BlindBackfill(); skipped > 0 {
		// Sealed under a key this server lacks: not searchable until a
		// server holding the key starts (docs/security.md).
		log.Warn("blind index: records skipped", "skipped", skipped, "migrated", migrated)
	} else if migrated > 0 {
		log.Info("blind index: records migrated", "migrated", migrated)
	}
	for _, id := range db.ChangedKeys() {
		// The key configured under this id is not the one that sealed the
		// records under it (the id is named, never the key).
		log.Warn("encryption key differs from the one recorded for its id: its records cannot be opened", "key_id", id)
	}
	if n := db.Unreadable(); n > 0 {
		// Sealed under a key this server lacks (or a changed key): served
		// redacted, everything else in full (docs/operations.md).
		log.Warn("sealed records this server cannot open", "unreadable", n, "by_key_id", db.UnreadableByKey())
	}
	m.RecordsUnreadable(db.Unreadable())
	if migrated, skipped := db.AuditRefsBackfill(); skipped > 0 {
		// Sealed under a key this server lacks: their old text (which may
		// name other records) stays sealed until a server holding the key
		// starts and migrates them (docs/data-model.md).
		log.Warn("audit references: entries skipped", "skipped", skipped, "migrated", migrated)
	} else if migrated > 0 {
		log.Info("audit references: entries migrated", "migrated", migrated)
	}
	// closeStore runs once: at the end of shutdown, or on the way out of
	// a failed start.
	closeStore := sync.OnceFunc(func() {
		if err := db.Close(context.Background()); err != nil {
			log.Error("shutdown: closing the neo4j driver", "err", err)
			return
		}
		log.Info("shutdown: neo4j driver closed")
	})
	defer closeStore()

	// One name for this process in job leases and on the feed's lock.
	holder := jobs.DefaultHolder()
	jobsCfg.Holder = holder
	runner, err := jobs.New(db, policy, jobsCfg, log, time.Now)
	if err != nil {
		return err
	}
	// The change feed: this process numbers committed audit entries (in
	// turn with any other replica) and serves subscriptions. Its own writes
	// wake it; other replicas' are seen within feed.poll_interval. The
	// jobs and the feed start once the server is listening.
	hub := feed.NewHub(db, feed.Config{Interval: cfg.Feed.PollInterval, Batch: cfg.Feed.Batch, Holder: holder,
		MaxSubscriptions: cfg.Limits.Subscriptions, PerPrincipal: func(p membrane.Principal) int { return cfg.SubscriptionsFor(p.Role) }}, log)
	db.AfterWrite = hub.Poke

	stores := membrane.Stores{Records: db, Revisions: db, Lineages: db, Deletes: db, Metrics: db, Jobs: runner, Retrieval: db, Captures: db}
	services := membrane.ServiceOptions{Policy: policy, SelectionThreshold: cfg.SelectionConfidenceThreshold, Log: log, Now: time.Now}
	if e := cfg.Embedding; e.Enabled() {
		emb, err := embedding.New(embedding.Config{Endpoint: e.Endpoint, Model: e.Model, APIKey: e.APIKey,
			Dimensions: e.Dimensions, SendDimensions: e.SendDimensions, Timeout: e.Timeout})
		if err != nil {
			return err
		}
		if err := db.EnsureVectorIndex(ctx, e.Dimensions); err != nil {
			return err
		}
		services.Embedder, services.EmbedMaxSensitivity = emb, membrane.Sensitivity(e.MaxSensitivity)
		log.Info("vector search on", "model", e.Model, "dimensions", e.Dimensions, "max_sensitivity", e.MaxSensitivity)
	}
	resolver := &graph.Resolver{Services: membrane.NewServices(stores, services), Events: db, Feed: hub}
	opts, err := handlerOptions(cfg)
	if err != nil {
		return err
	}
	obs := graph.Observability{Log: log, Metrics: m, ServeMetrics: m != nil && cfg.MetricsListen == ""}
	if tp != nil {
		obs.Tracer = tp
	}
	srv := &http.Server{
		Addr:              cfg.Listen,
		Handler:           graph.Observe(graph.NewHandler(resolver, db, keys, log, opts), obs),
		ReadHeaderTimeout: 10 * time.Second,
		// Not ReadTimeout, which would also cut the reads of SSE streams
		// and WebSockets: the handler bounds reading each body instead
		// (read_timeout).
		IdleTimeout: cfg.IdleTimeout,
	}
	// Shutdown calls this once its listeners are closed; draining tells
	// shutdown it ran, so that the steps are logged in order.
	draining := make(chan struct{})
	srv.RegisterOnShutdown(func() {
		log.Info("shutdown: listener closed, draining in-flight requests and ending subscriptions")
		close(draining)
		// http.Server.Shutdown does not wait for hijacked WebSocket
		// connections and would wait for SSE streams for ever: end every
		// subscription now. Each gets "complete"; its client reconnects
		// (to another replica) and resumes from its last cursor.
		hub.Close()
	})
	// Bind before announcing, so "listening" means connections are accepted.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	var metricsSrv *http.Server
	if m != nil && cfg.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", m.Handler())
		metricsSrv = &http.Server{Addr: cfg.MetricsListen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		mln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			ln.Close()
			return err
		}
		safego.GoErr("metrics server", errc, func() error { return metricsSrv.Serve(mln) })
		log.Info("metrics listening", "metrics", "http://"+cfg.MetricsListen+"/metrics")
	}
	scheme := "http"
	if cfg.TLSCertFile != "" {
		scheme = "https"
		safego.GoErr("server", errc, func() error { return srv.ServeTLS(ln, cfg.TLSCertFile, cfg.TLSKeyFile) })
	} else {
		safego.GoErr("server", errc, func() error { return srv.Serve(ln) })
	}
	runner.Start()
	// The feed stops before the driver closes (at the end of shutdown, or
	// on the way out of a failed serve).
	endFeed := hub.Go()
	defer endFeed()
	base := scheme + "://" + cfg.Listen
	log.Info("membrane listening", "mode", cfg.Mode, "graphiql", opts.GraphiQL, "introspection", opts.Introspection,
		"url", base+"/", "graphql", base+"/graphql", "allow_list", opts.AllowList != nil)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return shutdown(log, cfg.ShutdownTimeout, srv, draining, metricsSrv, runner, endFeed, closeStore, tp)
}

// shutdown stops the server gracefully, logging each step: it stops
// accepting connections, ends the subscriptions and drains the requests in
// flight while the jobs stop, then stops the change feed and closes the
// metrics listener, the Neo4j driver and the trace exporter. Jobs stop during the drain, not after it: a runJob request
// waits for its run, which only Stop cancels (every job is idempotent; the
// next run finishes the work).
func shutdown(log *slog.Logger, timeout time.Duration, srv *http.Server, draining <-chan struct{}, metricsSrv *http.Server,
	runner *jobs.Runner, endFeed, closeStore func(), tp *tracing.Provider) error {
	log.Info("shutting down", "timeout", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	drained := make(chan error, 1)
	safego.GoErr("shutdown", drained, func() error { return srv.Shutdown(ctx) })
	// Shutdown closes its listeners, then runs the hook that closes
	// draining (and logs so) in a goroutine of its own: wait for it, so
	// that the steps are logged in order.
	select {
	case <-draining:
	case <-ctx.Done():
	}
	if err := runner.Stop(ctx); err != nil {
		log.Error("shutdown: jobs", "err", err)
	} else {
		log.Info("shutdown: jobs stopped")
	}
	var failed error
	if err := <-drained; err != nil {
		// Requests still running at the deadline are cut off.
		log.Error("shutdown: requests still in flight at the deadline; closing their connections", "err", err)
		_ = srv.Close()
		failed = err
	} else {
		log.Info("shutdown: requests drained")
	}
	// What follows gets time of its own: after a drain that ran out of
	// time, ctx has ended, and the last requests' spans matter most then.
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelFlush()
	if metricsSrv != nil {
		if err := metricsSrv.Shutdown(flushCtx); err != nil {
			_ = metricsSrv.Close()
		}
	}
	endFeed()
	closeStore()
	if tp != nil {
		// Spans of the last requests are still batched: send them.
		if err := tp.Shutdown(flushCtx); err != nil {
			log.Error("shutdown: trace exporter", "err", err)
		} else {
			log.Info("shutdown: trace exporter closed")
		}
	}
	if failed != nil {
		return fmt.Errorf("shutdown: %w", failed)
	}
	log.Info("shutdown complete")
	return nil
}

// version is the module version the binary was built from, for traces.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "unknown"
}

// handlerOptions maps the configuration onto the HTTP handler's options.
func handlerOptions(cfg config.Config) (graph.HandlerOptions, error) {
	o := graph.HandlerOptions{
		GraphiQL: cfg.GraphiQLOn(), Introspection: cfg.IntrospectionOn(),
		Limits: map[membrane.Role]graph.QueryLimits{}, RateLimits: map[membrane.Role]graph.RateLimit{},
		ParserTokenLimit: cfg.Limits.Tokens, RateLimitActors: cfg.Limits.RateLimitActors,
		RequestTimeout: cfg.RequestTimeout, ReadTimeout: cfg.ReadTimeout, MaxBodyBytes: cfg.MaxBodyBytes, APQCacheSize: cfg.PersistedQueries.CacheSize,
		CORS: graph.CORSOptions{AllowedOrigins: cfg.CORS.AllowedOrigins, AllowedMethods: cfg.CORS.AllowedMethods,
			AllowedHeaders: cfg.CORS.AllowedHeaders, AllowCredentials: cfg.CORS.AllowCredentials, MaxAge: cfg.CORS.MaxAge},
	}
	for _, role := range []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin} {
		l := cfg.LimitsFor(role)
		o.Limits[role] = graph.QueryLimits{Complexity: l.Complexity, Depth: l.Depth, RootFields: l.RootFields}
		o.RateLimits[role] = graph.RateLimit{Rate: l.Rate, Burst: l.Burst}
	}
	if path := cfg.PersistedQueries.AllowList; path != "" {
		ops, err := graph.LoadAllowList(path)
		if err != nil {
			return o, err
		}
		o.AllowList = ops
	}
	return o, nil
}
