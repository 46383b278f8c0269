// Package app is the Membrane server as a value: Main wires the
// configuration, the Neo4j store, the change feed, the GraphQL handler and
// the maintenance jobs (Open), serves until its context ends (Run) and shuts
// down in order (Close). The binary (server.go) only parses flags and
// handles signals; the tests run the same Main in-process (internal/apptest).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/logging"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/metrics"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/safego"
	"github.com/membrane/membrane/internal/tracing"
)

// Main is one Membrane server. Build it with NewMain, then Open, Run and
// Close it; Close may be called whatever happened before (it does only
// what is left to do, once).
type Main struct {
	cfg    config.Config
	logOut io.Writer
	log    *slog.Logger
	policy membrane.Policy
	keys   *membrane.Keyring

	// Observers of the store and the jobs (metrics, tracing), and what
	// the jobs are configured with.
	metrics  *metrics.Metrics
	tp       *tracing.Provider
	storeObs []neo4j.Observer
	jobsCfg  jobs.Config

	db *neo4j.DB
	// emb is the embedding model (nil: full text only), for the services
	// and the embed job.
	emb membrane.Embedder
	// services are the application services the transports call; their
	// background vector writer stops before the driver closes.
	services *membrane.Services
	runner   *jobs.Runner
	hub      *feed.Hub

	srv        *http.Server
	ln         net.Listener
	metricsSrv *http.Server
	metricsLn  net.Listener
	// draining is closed by srv's shutdown hook (see newHTTPServer).
	draining chan struct{}
	// handler is what the "membrane listening" line says of the GraphQL
	// handler's options.
	handler struct{ graphiQL, explorer, introspection, allowList bool }

	// serving is set by Run once the listeners are served; errc carries
	// the servers' errors.
	serving bool
	errc    chan error
	endFeed func()

	// opened is set once Open succeeded: Close shuts down only then (a
	// failed Open closed what it had opened).
	opened    bool
	closeOnce sync.Once
	closeErr  error
}

// NewMain returns a server for cfg (as config.Load returns it) that logs
// to logOut (os.Stderr for the binary).
func NewMain(cfg config.Config, logOut io.Writer) *Main {
	return &Main{cfg: cfg, logOut: logOut, errc: make(chan error, 2)}
}

// Open wires the server: logger, observers, store (connected, migrated,
// start-up passes run), jobs, change feed, GraphQL handler, and binds the
// listeners, so that connections are accepted (and queue) from its return
// on. Nothing is served and no job runs until Run. ctx bounds the start-up
// (tracing set-up, connecting, migrating); on error everything opened so
// far is closed again.
func (m *Main) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			m.closeOpened()
		}
	}()
	steps := []func(context.Context) error{m.openConfig, m.openObservers, m.openStore, m.openEmbedder, m.warmStore, m.openJobs, m.openHTTP, m.listen}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	m.opened = true
	return nil
}

// Run serves the listeners, starts the jobs and the change feed, and
// blocks until ctx ends (nil) or a server fails (its error). Close then
// shuts down.
func (m *Main) Run(ctx context.Context) error {
	m.serve()
	m.runner.Start()
	// The feed stops before the driver closes (Close).
	m.endFeed = m.hub.Go()
	m.log.Info("membrane listening", m.listeningAttrs()...)
	select {
	case err := <-m.errc:
		return err
	case <-ctx.Done():
		return nil
	}
}

// Close shuts the server down gracefully, logging each step; it returns
// an error when requests were still in flight at the shutdown timeout
// (see shutdown). Call it once Run has returned (or instead of Run);
// calling it again returns the same result. After a server failed, Run's
// error, it shuts down the same way: the jobs record their end and
// release their leases, the spans are sent.
func (m *Main) Close() error {
	m.closeOnce.Do(func() {
		if !m.opened {
			return
		}
		m.closeErr = m.shutdown()
	})
	return m.closeErr
}

// Addr is the address the GraphQL listener is bound to (with the port
// the system chose when the configuration asked for port 0).
func (m *Main) Addr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// openConfig sets up the logger, derives the policy and the API keys from
// the configuration, and logs its warnings.
func (m *Main) openConfig(context.Context) error {
	level, err := logging.ParseLevel(m.cfg.LogLevel)
	if err != nil {
		return err
	}
	m.log = logging.New(m.logOut, m.cfg.LogFormat, level)
	safego.Report(m.log, nil)
	if m.policy, err = m.cfg.Policy(); err != nil {
		return err
	}
	if m.keys, err = m.cfg.Keyring(); err != nil {
		return err
	}
	if len(m.cfg.Encryption.Keys) == 0 {
		m.log.Warn("no encryption key configured (MEMBRANE_ENCRYPTION_KEY): records of sensitivity " + m.cfg.Encryption.From +
			" and above will be refused rather than stored in clear")
	}
	if m.keys.Open() {
		m.log.Warn("NO API KEYS CONFIGURED: running in open development mode; every request is an admin " +
			"that sees every record. Configure api_keys (or MEMBRANE_API_KEYS / MEMBRANE_API_KEYS_FILE) before exposing this server.")
	}
	return nil
}

// openObservers sets up the observers of the store and the jobs: metrics
// unless disabled, spans only when tracing is configured (off, nothing is
// set up at all).
func (m *Main) openObservers(ctx context.Context) error {
	jobsCfg, err := m.cfg.JobsConfig()
	if err != nil {
		return err
	}
	m.jobsCfg = jobsCfg
	if m.cfg.MetricsEnabled {
		m.metrics = metrics.New()
		safego.Report(m.log, m.metrics.PanicRecovered)
		m.storeObs = append(m.storeObs, m.metrics)
		m.jobsCfg.Observers = append(m.jobsCfg.Observers, m.metrics)
	}
	if !m.cfg.TracingEnabled() {
		return nil
	}
	if m.tp, err = tracing.New(ctx, m.cfg.OTelEndpoint, version()); err != nil {
		return err
	}
	// Export failures are the exporter's to retry; log them as ours.
	log := m.log
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	tracer := m.tp.Tracer(tracing.Name)
	m.storeObs = append(m.storeObs, tracing.Store{Tracer: tracer})
	m.jobsCfg.Observers = append(m.jobsCfg.Observers, tracing.Jobs{Tracer: tracer})
	m.log.Info("tracing on", "otel_endpoint", redactedEndpoint(m.cfg.OTelEndpoint))
	return nil
}

// redactedEndpoint names the trace collector for the log: a URL may hold
// credentials.
func redactedEndpoint(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && endpoint != "" {
		return u.Redacted()
	}
	return "from OTEL_EXPORTER_OTLP_* variables"
}

// openStore connects to Neo4j, checks the schema version (migrating when
// configured to), and reports what it found of the encryption keys.
func (m *Main) openStore(ctx context.Context) error {
	uri := neo4j.RedactedURI(m.cfg.Neo4j.URI)
	m.log.Info("connecting to neo4j", "uri", uri, "database", m.cfg.Neo4j.Database, "startup_timeout", m.cfg.StartupTimeout.String())
	waiting := func(waited time.Duration, err error) {
		m.log.Warn("waiting for neo4j", "uri", uri, "waited", waited.String(), "startup_timeout", m.cfg.StartupTimeout.String(), "err", err)
	}
	db, err := openStore(ctx, m.cfg, waiting, m.storeObs...)
	if err != nil {
		return err
	}
	m.db = db
	m.reportStartupPasses()
	return nil
}

// warmStore runs the store's warm-up (neo4j.warm_up_reads point reads)
// before the server listens. A failed warm-up is logged, not fatal: it only
// makes the first requests faster.
func (m *Main) warmStore(ctx context.Context) error {
	n := m.cfg.Neo4j.WarmUpReads
	if n == 0 {
		return nil
	}
	start := time.Now()
	done, err := m.db.Warm(ctx, n)
	if err != nil {
		m.log.Warn("neo4j warm-up cut short", "reads", done, "err", err)
		return nil
	}
	m.log.Info("neo4j warmed", "reads", done, "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// reportStartupPasses logs what the store found at start about the
// encryption keys and the records they sealed.
func (m *Main) reportStartupPasses() {
	db, log := m.db, m.log
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
	m.metrics.RecordsUnreadable(db.Unreadable())
}

// openJobs builds the jobs runner and the change feed, under one name for
// this server in job leases and on the feed's lock. The change feed
// numbers committed audit entries (in turn with any other replica) and
// serves subscriptions; this server's own writes wake it, other replicas'
// are seen within feed.poll_interval. Both start in Run.
func (m *Main) openJobs(context.Context) error {
	m.jobsCfg.Holder = jobs.DefaultHolder()
	m.jobsCfg.Embedder, m.jobsCfg.EmbedMaxSensitivity = m.emb, membrane.Sensitivity(m.cfg.Embedding.MaxSensitivity)
	var err error
	if m.runner, err = jobs.New(m.db, m.policy, m.jobsCfg, m.log, time.Now); err != nil {
		return err
	}
	cfg := m.cfg
	m.hub = feed.NewHub(m.db, feed.Config{Interval: cfg.Feed.PollInterval, Batch: cfg.Feed.Batch, Holder: m.jobsCfg.Holder,
		MaxSubscriptions: cfg.Limits.Subscriptions, PerPrincipal: func(p membrane.Principal) int { return cfg.SubscriptionsFor(p.Role) }}, m.log)
	m.db.AfterWrite = m.hub.Poke
	return nil
}

// listen binds the GraphQL listener and, when configured, the metrics
// listener: bound before "membrane listening" is logged, so that the line
// means connections are accepted.
func (m *Main) listen(context.Context) error {
	ln, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return err
	}
	m.ln = ln
	if m.metricsSrv == nil {
		return nil
	}
	if m.metricsLn, err = net.Listen("tcp", m.cfg.MetricsListen); err != nil {
		return err
	}
	return nil
}

// serve serves the listeners bound by listen.
func (m *Main) serve() {
	m.serving = true
	if m.metricsSrv != nil {
		safego.GoErr("metrics server", m.errc, func() error { return m.metricsSrv.Serve(m.metricsLn) })
		m.log.Info("metrics listening", "metrics", "http://"+m.cfg.MetricsListen+"/metrics")
	}
	if m.cfg.TLSCertFile != "" {
		safego.GoErr("server", m.errc, func() error { return m.srv.ServeTLS(m.ln, m.cfg.TLSCertFile, m.cfg.TLSKeyFile) })
		return
	}
	safego.GoErr("server", m.errc, func() error { return m.srv.Serve(m.ln) })
}

// baseURL is where the server is reached, for the "membrane listening"
// line: the configured address, or the bound one when the configuration
// left the port to the system.
func (m *Main) baseURL() string {
	scheme := "http"
	if m.cfg.TLSCertFile != "" {
		scheme = "https"
	}
	addr := m.cfg.Listen
	if _, port, err := net.SplitHostPort(addr); err == nil && port == "0" && m.ln != nil {
		addr = m.ln.Addr().String()
	}
	return scheme + "://" + addr
}

// closeOpened closes what a failed Open had opened, newest first.
func (m *Main) closeOpened() {
	for _, ln := range []net.Listener{m.metricsLn, m.ln} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	m.closeServices(context.Background())
	m.closeStore()
	if m.tp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.tp.Shutdown(ctx)
	}
}

// closeServices stops the services' background work (the vectors of new
// records still queued are written first), within shutdown_timeout.
func (m *Main) closeServices(ctx context.Context) {
	if m.services == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.ShutdownTimeout)
	defer cancel()
	if err := m.services.Close(ctx); err != nil {
		m.log.Error("shutdown: new records' vectors not all written (the embed job will)", "err", err)
		return
	}
	m.log.Info("shutdown: services stopped")
}

// closeStore closes the Neo4j driver, once: at the end of shutdown, or on
// the way out of a failed start.
func (m *Main) closeStore() {
	db := m.db
	if db == nil {
		return
	}
	m.db = nil
	if err := db.Close(context.Background()); err != nil {
		m.log.Error("shutdown: closing the neo4j driver", "err", err)
		return
	}
	m.log.Info("shutdown: neo4j driver closed")
}

// OpenStore connects to Neo4j as configured, reporting its transactions
// to observers, and prepares the database (neo4j.DB.Start: the schema and
// its version, migrating an older database when cfg says so), within
// cfg.StartupTimeout.
func OpenStore(ctx context.Context, cfg config.Config, observers ...neo4j.Observer) (*neo4j.DB, error) {
	return openStore(ctx, cfg, nil, observers...)
}

// openStore is OpenStore, telling waiting while Neo4j does not answer.
func openStore(ctx context.Context, cfg config.Config, waiting func(time.Duration, error), observers ...neo4j.Observer) (*neo4j.DB, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	db, err := connectStore(ctx, cfg, waiting, observers...)
	if err != nil {
		return nil, err
	}
	if err := db.Start(ctx, cfg.MigrateAtStartOn()); err != nil {
		db.Close(context.Background())
		return nil, err
	}
	return db, nil
}

// connectStore creates the driver and waits for Neo4j to answer, until
// ctx ends, without touching the database. Failing to connect within the
// start-up timeout names the setting that bounds the wait.
func connectStore(ctx context.Context, cfg config.Config, waiting func(time.Duration, error), observers ...neo4j.Observer) (*neo4j.DB, error) {
	sealer, err := cfg.Sealer()
	if err != nil {
		return nil, err
	}
	db, err := neo4j.Open(ctx, neo4j.Config{
		URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database,
		MaxPoolSize: cfg.Neo4j.MaxPoolSize, TxTimeout: cfg.Neo4j.TxTimeout, Sealer: sealer, Observers: observers,
		Waiting: waiting,
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (startup_timeout %s, MEMBRANE_STARTUP_TIMEOUT, bounds the wait; is Neo4j running there and is NEO4J_URI right?)", err, cfg.StartupTimeout)
		}
		return nil, err
	}
	return db, nil
}

// version is the module version the binary was built from, for traces.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "unknown"
}

// versionLine is what membrane version prints: the module version, then
// the VCS revision and time the binary was built from when the build
// recorded them (go build in a git checkout; -buildvcs=false or a copied
// tree without .git records none).
func versionLine() string {
	line := version()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return line
	}
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		line += " " + rev
		if vcs["vcs.modified"] == "true" {
			line += "+modified"
		}
		if t := vcs["vcs.time"]; t != "" {
			line += " " + t
		}
	}
	return line + " " + bi.GoVersion
}
