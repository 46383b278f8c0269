// Command membrane serves the Membrane GraphQL API over a Neo4j store.
// It only parses its subcommand and flags and handles signals; the server
// itself is internal/app's Main.
package main

//go:generate go run ./cmd/gqlgen

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/membrane/membrane/internal/app"
	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/membrane"
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
	db, err := app.OpenStore(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("reseal"))
	recs, audits, err := db.Reseal(ctx, *keyID)
	fmt.Printf("resealed %d records and %d audit entries from key %q to key %q\n", recs, audits, *keyID, cfg.Encryption.ActiveKey)
	return err
}

// run serves until SIGINT or SIGTERM, then shuts down gracefully (a
// signal during start-up cancels it).
func run(args []string) error {
	cfg, err := config.Load(args, os.Getenv)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := app.NewMain(cfg, os.Stderr)
	if err := m.Open(ctx); err != nil {
		return err
	}
	if err := m.Run(ctx); err != nil {
		_ = m.Close()
		return err
	}
	return m.Close()
}
