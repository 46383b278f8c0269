package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
)

// Exit codes of the membrane command: 2 is a usage error (nothing was
// done), 1 a failure of what was asked.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

const usage = `Usage:
  membrane [flags]                  serve the GraphQL API (flags below; environment and file: README)
  membrane hash-key < key           print the SHA-256 to configure for an API key read from stdin
  membrane migrate [flags]          bring the database to this version's schema (a server refuses an older one
                                    unless migrate_at_start is on; README, docs/operations.md "Upgrades")
  membrane reseal -key ID [flags]   re-encrypt values sealed with key ID under the active key
  membrane healthcheck [-url URL]   exit 0 when the server at URL answers 200 (default %s)
  membrane mcp                      MCP over stdin/stdout for MCP clients: forwards every call to the running
                                    server at MEMBRANE_URL (default %s) with MEMBRANE_API_KEY (docs/mcp.md)
  membrane version                  print the module version and VCS revision
  membrane help                     print this help

Flags of the server (and of migrate and reseal):
`

// defaultHealthURL is what healthcheck asks when no -url is given: the
// readiness probe of a server listening on the default port.
const defaultHealthURL = "http://127.0.0.1:8080/readyz"

// CLI runs the membrane command with args (without the program name) and
// returns its exit status. Serving stops on SIGINT or SIGTERM.
func CLI(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	var err error
	switch cmd {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	case "version":
		if len(args) > 1 {
			err = usageError{fmt.Errorf("version takes no argument, got %q", args[1])}
			break
		}
		fmt.Fprintln(stdout, "membrane", versionLine())
		return exitOK
	case "hash-key":
		err = hashKey(args[1:], stdin, stdout)
	case "migrate":
		err = migrate(args[1:], stdout)
	case "reseal":
		err = reseal(args[1:], stdout)
	case "healthcheck":
		err = healthcheck(args[1:], stdout)
	case "mcp":
		err = mcpBridge(args[1:], stdin, stdout, stderr)
	default:
		err = serve(args, stdout, stderr)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		// A subcommand's -h printed its own usage.
		return exitOK
	case errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, "membrane:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "membrane:", err)
		return exitFail
	}
}

// usageError is a mistake in the command line: nothing was done.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func printUsage(w io.Writer) {
	fmt.Fprintf(w, usage, defaultHealthURL, mcp.DefaultURL)
	config.PrintFlags(w)
}

// subFlags is a flag set for a subcommand whose -h prints to stdout, and
// whose parse errors are returned as usage errors (printed once, by CLI).
func subFlags(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: membrane %s\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parse parses args into fs (whose Usage answers -h).
func parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return usageError{err}
	}
	return nil
}

// hashKey prints the SHA-256 of the key read from stdin. An empty key is
// refused: hashing it silently hid a missing pipe or a key passed as an
// argument, and printed a hash no client can ever present.
func hashKey(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := subFlags("hash-key", "hash-key < key   (prints the hex SHA-256 of the key on stdin)", stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("hash-key reads the key from stdin, not from an argument (got %q): echo -n KEY | membrane hash-key", fs.Arg(0))}
	}
	key, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	k := strings.TrimSpace(string(key))
	if k == "" {
		return usageError{errors.New("hash-key: no key on stdin: echo -n KEY | membrane hash-key")}
	}
	fmt.Fprintln(stdout, membrane.HashKey(k))
	return nil
}

// migrate brings the database of the configuration (the server's flags,
// environment and file) to this binary's schema version
// (neo4j.DB.Migrate), and prints what it did. It reads every record, so it
// is bounded by no timeout; SIGINT or SIGTERM stops it, and running it
// again picks up where it stopped (a record already current is left alone).
func migrate(args []string, stdout io.Writer) error {
	cfg, err := config.Load(args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, "Usage: membrane migrate [server flags]   (bring the database to this version's schema)")
		return err
	}
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	connect, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	db, err := connectStore(connect, cfg, nil)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	res, err := db.Migrate(membrane.NewContextWithTrust(ctx, membrane.SystemTrust("migrate")))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	fmt.Fprintf(stdout, "schema version %d (was %d): re-indexed %d records and %d sealed records\n", res.To, res.From, res.Terms, res.Blind)
	if res.BlindSkipped > 0 {
		fmt.Fprintf(stdout, "skipped %d sealed records that do not open with the configured keys: run migrate again with their key to index them\n", res.BlindSkipped)
	}
	return nil
}

func reseal(args []string, stdout io.Writer) error {
	fs := subFlags("reseal", "reseal -key ID [server flags]", stdout)
	keyID := fs.String("key", "", "id of the encryption key to retire")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *keyID == "" {
		return usageError{errors.New("reseal: -key is required")}
	}
	cfg, err := config.Load(fs.Args(), os.Getenv)
	if err != nil {
		return err
	}
	if len(cfg.Encryption.Keys) == 0 {
		return errors.New("reseal: no encryption keys configured (MEMBRANE_ENCRYPTION_KEY)")
	}
	db, err := OpenStore(context.Background(), cfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	ctx := membrane.NewContextWithTrust(context.Background(), membrane.SystemTrust("reseal"))
	res, err := db.Reseal(ctx, *keyID)
	fmt.Fprintf(stdout, "resealed %d records and %d audit entries from key %q to key %q\n", res.Records, res.Audits, *keyID, cfg.Encryption.ActiveKey)
	if res.SkippedRecords > 0 || res.SkippedAudits > 0 {
		// The operator decides what to do with them: they did not open
		// under the key, and stay sealed with it (unreadable as before).
		fmt.Fprintf(stdout, "skipped %d records and %d audit entries that do not open under key %q: they stay sealed with it\n",
			res.SkippedRecords, res.SkippedAudits, *keyID)
	}
	return err
}

// healthcheck asks url and succeeds on 200: the probe of a container
// whose image has no shell or curl (distroless; docker-compose.yml).
func healthcheck(args []string, stdout io.Writer) error {
	fs := subFlags("healthcheck", "healthcheck [-url URL] [-timeout D]   (exit 0 when URL answers 200)", stdout)
	url := fs.String("url", defaultHealthURL, "URL to ask (the readiness probe)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("healthcheck: unexpected argument %q", fs.Arg(0))}
	}
	client := &http.Client{Timeout: *timeout}
	resp, err := client.Get(*url)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", *url, resp.Status)
	}
	return nil
}

// mcpBridge serves MCP on stdin and stdout, the transport of MCP clients
// that start a command, forwarding every tool call to the server at
// MEMBRANE_URL with MEMBRANE_API_KEY (MEMBRANE_MAX_SENSITIVITY and
// MEMBRANE_SCOPES narrow it, as the headers do): the server enforces
// trust, in one place, and no second process opens the store or runs
// jobs. The key is read from the environment only, never from an
// argument, which other users of the machine could read. It ends when
// stdin does, or on SIGINT or SIGTERM; its log goes to stderr, as stdout
// carries the protocol.
func mcpBridge(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := subFlags("mcp", "mcp   (MCP over stdio, forwarding to MEMBRANE_URL with MEMBRANE_API_KEY; docs/mcp.md)", stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("mcp: unexpected argument %q (the server is MEMBRANE_URL, the key MEMBRANE_API_KEY)", fs.Arg(0))}
	}
	o := mcp.BridgeOptions{URL: os.Getenv("MEMBRANE_URL"), APIKey: os.Getenv("MEMBRANE_API_KEY"),
		MaxSensitivity: os.Getenv("MEMBRANE_MAX_SENSITIVITY"), Version: version(), Log: slog.New(slog.NewTextHandler(stderr, nil))}
	if v, ok := os.LookupEnv("MEMBRANE_SCOPES"); ok {
		o.Scopes = &v
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := mcp.NewBridge(o)
	defer b.Close()
	return b.RunStdio(ctx, stdin, stdout, 0)
}

// serve serves until SIGINT or SIGTERM, then shuts down gracefully (a
// signal during start-up cancels it).
func serve(args []string, stdout, logOut io.Writer) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return usageError{fmt.Errorf("unknown command %q (see membrane -h)", args[0])}
	}
	cfg, err := config.Load(args, os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		// membrane -listen :1 -h: the help, not an error.
		printUsage(stdout)
		return err
	}
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(cfg, logOut)
	if err := m.Open(ctx); err != nil {
		return err
	}
	if err := m.Run(ctx); err != nil {
		_ = m.Close()
		return err
	}
	return m.Close()
}
