package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/app"
	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/membrane"
)

// cli runs the membrane command in-process (app.CLI, all that main does)
// with args and stdin, in the test's environment, and returns its exit
// status and output. A command that does not end within a generous bound
// (it started serving) fails the test.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- app.CLI(args, strings.NewReader(stdin), &out, &errOut) }()
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("membrane %v did not end", args)
	}
	return code, out.String(), errOut.String()
}

// runCLI runs the membrane binary with args, stdin and env added to the
// test's environment, and returns its exit status and output: for what
// needs a process of its own (TestUnreachableNeo4j: the server's exit on
// an outage). A command that does not end within a generous bound (it
// started serving) fails the test.
func runCLI(t *testing.T, stdin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, apptest.Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("membrane %v did not end: stdout %q stderr %q", args, out.String(), errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// TestCLI runs the command's subcommands as a new user would (in-process,
// as main runs them): help never starts the server, hash-key refuses what
// it cannot hash, -h lists every subcommand. A server that would start is
// pointed at a closed port so that starting one fails the test rather than
// serving.
func TestCLI(t *testing.T) {
	closed := fmt.Sprintf("NEO4J_URI=bolt://127.0.0.1:%d", apptest.FreePort(t))
	t.Setenv("NEO4J_URI", strings.TrimPrefix(closed, "NEO4J_URI="))
	subcommands := []string{"hash-key", "migrate", "reseal", "healthcheck", "mcp", "version", "help"}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     []string
		stderr     []string
		noStdout   bool
		stdoutOnly string
	}{
		{name: "-h lists every subcommand", args: []string{"-h"}, stdout: append([]string{"-neo4j-uri"}, subcommands...)},
		{name: "help prints help and does not serve", args: []string{"help"}, stdout: subcommands},
		{name: "--help", args: []string{"--help"}, stdout: subcommands},
		{name: "unknown command", args: []string{"serve-please"}, code: 2, stderr: []string{`unknown command "serve-please"`}, noStdout: true},
		{name: "version", args: []string{"version"}, stdout: []string{"membrane "}},
		{name: "hash-key", args: []string{"hash-key"}, stdin: "a-long-random-key\n", stdoutOnly: membrane.HashKey("a-long-random-key") + "\n"},
		{name: "hash-key without input", args: []string{"hash-key"}, code: 2, stderr: []string{"no key on stdin"}, noStdout: true},
		{name: "hash-key with blank input", args: []string{"hash-key"}, stdin: " \n", code: 2, stderr: []string{"no key on stdin"}, noStdout: true},
		{name: "hash-key with an argument", args: []string{"hash-key", "a-long-random-key"}, code: 2, stderr: []string{"not from an argument"}, noStdout: true},
		{name: "hash-key -h", args: []string{"hash-key", "-h"}, stdout: []string{"Usage: membrane hash-key"}},
		{name: "migrate -h", args: []string{"migrate", "-h"}, stdout: []string{"Usage: membrane migrate"}},
		{name: "reseal without -key", args: []string{"reseal"}, code: 2, stderr: []string{"-key is required"}},
		{name: "mcp -h", args: []string{"mcp", "-h"}, stdout: []string{"Usage: membrane mcp", "MEMBRANE_URL", "MEMBRANE_API_KEY"}},
		{name: "mcp with an argument", args: []string{"mcp", "http://127.0.0.1:8080"}, code: 2, stderr: []string{"unexpected argument", "MEMBRANE_URL"}, noStdout: true},
		// Its client closed stdin at once: it ends, having said nothing.
		{name: "mcp ends with stdin", args: []string{"mcp"}, noStdout: true},
		{name: "healthcheck of nothing listening", args: []string{"healthcheck", "-url", "http://" + strings.TrimPrefix(closed, "NEO4J_URI=bolt://") + "/readyz"},
			code: 1, stderr: []string{"healthcheck:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d (stdout %q stderr %q)", code, tt.code, stdout, stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if tt.noStdout && stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if tt.stdoutOnly != "" && stdout != tt.stdoutOnly {
				t.Errorf("stdout %q, want %q", stdout, tt.stdoutOnly)
			}
		})
	}
}

// TestHealthcheckCommand probes a running server as the compose
// healthcheck does (the command in-process): ready is exit 0, a path that
// is not 200 is exit 1.
func TestHealthcheckCommand(t *testing.T) {
	p := start(t, jobsOff...)
	for _, tt := range []struct {
		path string
		code int
	}{{"/readyz", 0}, {"/healthz", 0}, {"/no-such-probe", 1}} {
		code, _, stderr := cli(t, "", "healthcheck", "-url", "http://"+p.Addr+tt.path)
		if code != tt.code {
			t.Errorf("healthcheck %s: exit status %d, want %d (%s)", tt.path, code, tt.code, stderr)
		}
	}
}

// TestUnreachableNeo4j starts the binary against a port where nothing
// listens: it says at once that it waits for Neo4j at that URI (without
// the password), then fails naming the URI and the setting that bounds
// the wait.
func TestUnreachableNeo4j(t *testing.T) {
	uri := fmt.Sprintf("bolt://127.0.0.1:%d", apptest.FreePort(t))
	code, _, stderr := runCLI(t, "", []string{"NEO4J_URI=" + uri, "NEO4J_USER=neo4j", "NEO4J_PASSWORD=s3cret-pw",
		"MEMBRANE_STARTUP_TIMEOUT=3s", "MEMBRANE_LOG_FORMAT=text", "MEMBRANE_LISTEN=127.0.0.1:0"})
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	for _, want := range []string{"waiting for neo4j", uri, "neo4j at " + uri + " not reachable", "MEMBRANE_STARTUP_TIMEOUT"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "s3cret-pw") {
		t.Errorf("stderr shows the password:\n%s", stderr)
	}
}
