// Command membrane serves the Membrane GraphQL API over a Neo4j store.
// It only wires: configuration, the Neo4j store, the GraphQL handler.
package main

//go:generate go run github.com/99designs/gqlgen generate

import (
	"context"
	"errors"
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
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "hash-key" {
		// Print the SHA-256 to configure for a key read from stdin.
		key, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "membrane:", err)
			os.Exit(1)
		}
		fmt.Println(membrane.HashKey(strings.TrimSpace(string(key))))
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "membrane:", err)
		os.Exit(1)
	}
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
	if keys.Open() {
		log.Warn("NO API KEYS CONFIGURED: running in open development mode; every request is an admin " +
			"that sees every record. Configure api_keys (or MEMBRANE_API_KEYS / MEMBRANE_API_KEYS_FILE) before exposing this server.")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	startCtx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	log.Info("connecting to neo4j", "uri", cfg.Neo4j.URI, "database", cfg.Neo4j.Database)
	db, err := neo4j.Open(startCtx, neo4j.Config{
		URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database,
		MaxPoolSize: cfg.Neo4j.MaxPoolSize, TxTimeout: cfg.Neo4j.TxTimeout,
	})
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	if err := db.Migrate(startCtx); err != nil {
		return err
	}

	resolver := &graph.Resolver{Store: db, Revisions: db, Lineages: db, Retrieval: db, Captures: db, Policy: policy,
		SelectionThreshold: cfg.SelectionConfidenceThreshold, Log: log, Now: time.Now}
	if e := cfg.Embedding; e.Enabled() {
		emb, err := embedding.New(embedding.Config{Endpoint: e.Endpoint, Model: e.Model, APIKey: e.APIKey,
			Dimensions: e.Dimensions, SendDimensions: e.SendDimensions, Timeout: e.Timeout})
		if err != nil {
			return err
		}
		if err := db.EnsureVectorIndex(startCtx, e.Dimensions); err != nil {
			return err
		}
		resolver.Embedder, resolver.EmbedMaxSensitivity = emb, membrane.Sensitivity(e.MaxSensitivity)
		log.Info("vector search on", "model", e.Model, "dimensions", e.Dimensions, "max_sensitivity", e.MaxSensitivity)
	}
	srv := &http.Server{
		Addr:              cfg.Listen,
		Handler:           graph.NewHandler(resolver, db, keys, log),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// Listen before logging that we do, so that a client reacting to the
	// log line finds the port open.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("membrane listening", "graphiql", "http://"+cfg.Listen+"/", "graphql", "http://"+cfg.Listen+"/graphql")

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancelShut := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelShut()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
