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
