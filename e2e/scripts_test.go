package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
)

// TestRunScriptHelp: scripts/run.sh -h, --help and help print its usage
// and exit 0 without starting Neo4j or building (it used to start Neo4j
// first, a minute of a new user's time before the text). NEO4J_URI is
// unset, so the script would start a Neo4j of its own: its data dir (a
// temporary one) must stay empty, and java, mvn and go, replaced on PATH
// by stand-ins that leave a mark and fail, must not run.
func TestRunScriptHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "help"} {
		t.Run(arg, func(t *testing.T) {
			stand := t.TempDir()
			marks := filepath.Join(t.TempDir(), "ran")
			for _, tool := range []string{"java", "mvn", "go"} {
				script := fmt.Sprintf("#!/bin/sh\necho %s >>%q\nexit 1\n", tool, marks)
				if err := os.WriteFile(filepath.Join(stand, tool), []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			home := t.TempDir()
			var env []string
			for _, kv := range os.Environ() {
				name, _, _ := strings.Cut(kv, "=")
				if name == "JAVA_HOME" || name == "MEMBRANE_ENCRYPTION_KEY" || name == "PATH" ||
					strings.HasPrefix(name, "NEO4J_") {
					continue
				}
				env = append(env, kv)
			}
			env = append(env, "PATH="+stand+string(os.PathListSeparator)+os.Getenv("PATH"),
				"NEO4J_HOME_DIR="+home, fmt.Sprintf("NEO4J_BOLT_PORT=%d", apptest.FreePort(t)),
				"NEO4J_HTTP_PORT=0", "NEO4J_START_TIMEOUT=5",
				// A key of its own, so that a script that went on would not
				// create the development key in the repository's .neo4j/.
				"MEMBRANE_ENCRYPTION_KEY="+newEncryptionKey(t))

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "run.sh"), arg)
			c.Env = env
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if err != nil {
				t.Errorf("scripts/run.sh %s: %v, want exit 0\nstdout:\n%s\nstderr:\n%s", arg, err, &stdout, &stderr)
			}
			if !strings.HasPrefix(stdout.String(), "Usage: scripts/run.sh") {
				t.Errorf("scripts/run.sh %s printed %q, want its usage", arg, &stdout)
			}
			if ran, err := os.ReadFile(marks); err == nil {
				t.Errorf("scripts/run.sh %s ran %q", arg, strings.Fields(string(ran)))
			}
			if entries, err := os.ReadDir(home); err != nil || len(entries) > 0 {
				t.Errorf("scripts/run.sh %s: the Neo4j data dir holds %v (%v), want it empty", arg, entries, err)
			}
		})
	}
}

// TestBenchScript runs scripts/bench.sh briefly, as docs/BENCHMARKS.md
// runs it: it starts a fresh Neo4j and the server the README's way, runs
// the cold point reads, a warm-up and the warm point reads from the bench
// process, prints their rows and the load averages, and leaves nothing
// behind (the data dir is gone and its Neo4j stopped). It measures nothing.
func TestBenchScript(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil && os.Getenv("JAVA_HOME") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("java not found: scripts/bench.sh needs Java 17+ to start its Neo4j")
		}
		t.Skip("skipping: java not found, so scripts/bench.sh cannot start its Neo4j")
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "bench.sh"), "-ops", "3", "-only", "^point read")
	c.Dir = repoRoot
	c.Env = append(os.Environ(), "BENCH_COLD=5", "TMPDIR="+tmp, "NEO4J_URI=bolt://127.0.0.1:1", "NEO4J_HEAP=512m", "NEO4J_PAGECACHE=128m",
		fmt.Sprintf("BENCH_BOLT_PORT=%d", apptest.FreePort(t)), fmt.Sprintf("BENCH_LISTEN=127.0.0.1:%d", apptest.FreePort(t)))
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("scripts/bench.sh: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"load average at start", "point read, cold", "point read", "load average at end", "server", "neo4j"} {
		if !strings.Contains(out, want) {
			t.Errorf("scripts/bench.sh printed no %q:\n%s\nstderr:\n%s", want, out, &stderr)
		}
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("scripts/bench.sh left %v behind (%v)", left, err)
	}
}
