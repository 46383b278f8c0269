package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/app"
	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/config"
)

// messages are the msg of every JSON log line, in order.
func messages(t *testing.T, log *apptest.Log) []string {
	t.Helper()
	var msgs []string
	for _, line := range log.Lines() {
		var entry struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msgs = append(msgs, entry.Msg)
	}
	return msgs
}

// newMain returns a Main for the test Neo4j with the test suite's
// encryption key, JSON logs, the jobs and the warm-up off and settings
// added.
func newMain(t *testing.T, settings map[string]string) (*app.Main, *apptest.Log) {
	t.Helper()
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Fatal("NEO4J_URI is not set: run the suite with scripts/test.sh")
	}
	env := map[string]string{"NEO4J_URI": uri, "MEMBRANE_ENCRYPTION_KEY": apptest.SealKey(), "MEMBRANE_LISTEN": "127.0.0.1:0",
		"MEMBRANE_LOG_FORMAT": "json", "MEMBRANE_JOBS_DECAY": "off", "MEMBRANE_JOBS_PRUNE": "off", "MEMBRANE_JOBS_CONSOLIDATE": "off", "MEMBRANE_JOBS_EMBED": "off",
		"MEMBRANE_NEO4J_WARM_UP_READS": "0"}
	for k, v := range settings {
		env[k] = v
	}
	cfg, err := config.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := apptest.NewLog()
	return app.NewMain(cfg, log), log
}

// TestMainCloseWithoutRun: a Main opened but never run is closed in full,
// its listener included (nothing serves it, so the HTTP server's shutdown
// would leave it accepting connections into its backlog); a second Close
// does nothing and returns the same.
func TestMainCloseWithoutRun(t *testing.T) {
	m, log := newMain(t, nil)
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := m.Addr()
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Close", addr)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	msgs := messages(t, log)
	steps := []string{"shutting down", "shutdown: listener closed", "shutdown: jobs stopped", "shutdown: requests drained",
		"shutdown: neo4j driver closed", "shutdown complete"}
	next := 0
	for _, msg := range msgs {
		if next < len(steps) && strings.HasPrefix(msg, steps[next]) {
			next++
		}
		if strings.HasPrefix(msg, "membrane listening") {
			t.Fatalf("a Main that never ran logged %q", msg)
		}
	}
	if next < len(steps) || strings.Count(strings.Join(msgs, "\n"), "shutdown complete") != 1 {
		t.Fatalf("steps logged %d of %v:\n%s", next, steps, strings.Join(msgs, "\n"))
	}
}

// TestMainOpenFails: an Open that fails after the store is open closes the
// driver (and whatever else it opened) on its way out, and returns the
// error; Close afterwards has nothing left to do.
func TestMainOpenFails(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name     string
		settings map[string]string
		want     string
	}{
		{"the listen address is taken", map[string]string{"MEMBRANE_LISTEN": busy.Addr().String()}, "address already in use"},
		{"the allow-list cannot be read", map[string]string{"MEMBRANE_PERSISTED_QUERIES_ALLOW_LIST": filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
		{"the metrics address is taken", map[string]string{"MEMBRANE_METRICS_LISTEN": busy.Addr().String()}, "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, log := newMain(t, tt.settings)
			err := m.Open(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v, want an error with %q", err, tt.want)
			}
			msgs := messages(t, log)
			if !containsPrefix(msgs, "connecting to neo4j") || !containsPrefix(msgs, "shutdown: neo4j driver closed") {
				t.Fatalf("want the driver opened and closed again:\n%s", strings.Join(msgs, "\n"))
			}
			if err := m.Close(); err != nil {
				t.Fatalf("Close after a failed Open: %v", err)
			}
			if after := messages(t, log); len(after) != len(msgs) {
				t.Fatalf("Close after a failed Open logged:\n%s", strings.Join(after[len(msgs):], "\n"))
			}
		})
	}
}

// TestMainListensOnTheBoundPort: with port 0 in the configuration, Addr
// and the "membrane listening" line name the port the system chose, and
// Run serves it until its context ends.
func TestMainListensOnTheBoundPort(t *testing.T) {
	m, log := newMain(t, nil)
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if strings.HasSuffix(m.Addr(), ":0") {
		t.Fatalf("Addr %q: want the bound port", m.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://" + m.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz = %d", resp.StatusCode)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	text := log.String()
	if !strings.Contains(text, `"url":"http://`+m.Addr()+`/"`) {
		t.Fatalf("the listening line does not name %s:\n%s", m.Addr(), text)
	}
}

func containsPrefix(msgs []string, prefix string) bool {
	for _, m := range msgs {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}

// TestMainWarmsTheStore: Open runs neo4j.warm_up_reads point reads before
// the server listens and says so; none of them fails (each finds no
// record), and the server then answers as usual.
func TestMainWarmsTheStore(t *testing.T) {
	m, log := newMain(t, map[string]string{"MEMBRANE_NEO4J_WARM_UP_READS": "40"})
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	var warmed []string
	for _, line := range log.Lines() {
		var entry struct {
			Msg   string
			Reads int
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if strings.HasPrefix(entry.Msg, "neo4j warm") {
			warmed = append(warmed, fmt.Sprintf("%s reads=%d", entry.Msg, entry.Reads))
		}
	}
	if want := []string{"neo4j warmed reads=40"}; !slices.Equal(warmed, want) {
		t.Fatalf("warm-up logged %q, want %q", warmed, want)
	}
}
