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
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/embedding"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
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

// openStore connects to Neo4j as configured and applies the schema.
func openStore(ctx context.Context, cfg config.Config) (*neo4j.DB, error) {
	sealer, err := cfg.Sealer()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	db, err := neo4j.Open(ctx, neo4j.Config{
		URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database,
		MaxPoolSize: cfg.Neo4j.MaxPoolSize, TxTimeout: cfg.Neo4j.TxTimeout, Sealer: sealer,
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
	var h slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, nil)
	}
	log := slog.New(h)
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

	log.Info("connecting to neo4j", "uri", cfg.Neo4j.URI, "database", cfg.Neo4j.Database)
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())

	runner, err := jobs.New(db, policy, jobsCfg, log, time.Now)
	if err != nil {
		return err
	}
	runner.Start()

	resolver := &graph.Resolver{Store: db, Revisions: db, Lineages: db, Deletes: db, MetricsService: db, Jobs: runner,
		Retrieval: db, Captures: db, Policy: policy, SelectionThreshold: cfg.SelectionConfidenceThreshold, Log: log, Now: time.Now}
	if e := cfg.Embedding; e.Enabled() {
		emb, err := embedding.New(embedding.Config{Endpoint: e.Endpoint, Model: e.Model, APIKey: e.APIKey,
			Dimensions: e.Dimensions, SendDimensions: e.SendDimensions, Timeout: e.Timeout})
		if err != nil {
			return err
		}
		if err := db.EnsureVectorIndex(ctx, e.Dimensions); err != nil {
			return err
		}
		resolver.Embedder, resolver.EmbedMaxSensitivity = emb, membrane.Sensitivity(e.MaxSensitivity)
		log.Info("vector search on", "model", e.Model, "dimensions", e.Dimensions, "max_sensitivity", e.MaxSensitivity)
	}
	opts, err := handlerOptions(cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              cfg.Listen,
		Handler:           graph.NewHandler(resolver, db, keys, log, opts),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// Bind before announcing, so "listening" means connections are accepted.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	scheme := "http"
	if cfg.TLSCertFile != "" {
		scheme = "https"
		go func() { errc <- srv.ServeTLS(ln, cfg.TLSCertFile, cfg.TLSKeyFile) }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	base := scheme + "://" + cfg.Listen
	log.Info("membrane listening", "mode", cfg.Mode, "graphiql", opts.GraphiQL, "introspection", opts.Introspection,
		"url", base+"/", "graphql", base+"/graphql", "allow_list", opts.AllowList != nil)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancelShut := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelShut()
	// Jobs stop first: a running job is canceled between batches (every
	// job is idempotent, the next run finishes it) and records its end,
	// which also ends any runJob request waiting for it.
	if err := runner.Stop(shutCtx); err != nil {
		log.Error("stopping jobs", "err", err)
	}
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handlerOptions maps the configuration onto the HTTP handler's options.
func handlerOptions(cfg config.Config) (graph.HandlerOptions, error) {
	o := graph.HandlerOptions{
		GraphiQL: cfg.GraphiQLOn(), Introspection: cfg.IntrospectionOn(),
		Limits: map[membrane.Role]graph.QueryLimits{}, RateLimits: map[membrane.Role]graph.RateLimit{},
		ParserTokenLimit: cfg.Limits.Tokens, RateLimitActors: cfg.Limits.RateLimitActors,
		RequestTimeout: cfg.RequestTimeout, MaxBodyBytes: cfg.MaxBodyBytes, APQCacheSize: cfg.PersistedQueries.CacheSize,
		CORS: graph.CORSOptions{AllowedOrigins: cfg.CORS.AllowedOrigins, AllowedMethods: cfg.CORS.AllowedMethods,
			AllowedHeaders: cfg.CORS.AllowedHeaders, AllowCredentials: cfg.CORS.AllowCredentials, MaxAge: cfg.CORS.MaxAge},
	}
	for _, role := range []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin} {
		l := cfg.LimitsFor(role)
		o.Limits[role] = graph.QueryLimits{Complexity: l.Complexity, Depth: l.Depth}
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
