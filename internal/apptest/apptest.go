// Package apptest is the one harness that runs Membrane servers for tests,
// against a real Neo4j: in-process (Start: internal/app's Main on a port of
// its own, the usual case) or as the built binary (StartProcess: only for
// what shows at process level, signals, crashes and outages). Both are
// configured the same way, by environment settings, and both keep their
// log in a Log.
package apptest

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/app"
	"github.com/membrane/membrane/internal/config"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// Generous protocol bounds: start-up migrates a shared database on a busy
// machine; a graceful stop drains and closes the driver.
const (
	startTimeout = 2 * time.Minute
	stopTimeout  = 30 * time.Second
)

// Options say how to start a server. Whatever they leave out stays as
// config.Load sets it, except the harness's defaults (see environment).
type Options struct {
	// Neo4jURI is the database; empty means NEO4J_URI of the environment
	// (the shared test database).
	Neo4jURI string
	// APIKey, when set, is an API key for an admin over every scope;
	// empty (and no Principals) runs the server in open development mode.
	APIKey string
	// Principals are further API keys beside APIKey (which must then be
	// set), each with its own role, scopes and rate limit.
	Principals []Principal
	// EncryptionKey is MEMBRANE_ENCRYPTION_KEY (id:base64); empty means
	// none. SealKey is the test suite's.
	EncryptionKey string
	// Port on 127.0.0.1; 0 picks a free one. Restarts keep the port.
	Port int
	// Env are further settings, NAME=value, applied last.
	Env []string
	// RunScript starts a process server as the README says to run it:
	// scripts/run.sh, which builds bin/membrane in the repository and runs
	// it (with NEO4J_URI set, it starts no Neo4j of its own). Set
	// EncryptionKey with it, or the script creates a development key.
	RunScript bool
}

// Principal is one API key and the principal it authenticates.
type Principal struct {
	Key, Actor, Role string
	Scopes           []string
}

// SealKey returns the test suite's encryption key in
// MEMBRANE_ENCRYPTION_KEY form. A server that reads the shared test
// database needs it: other tests sealed records there with it, and the
// start-up passes read some.
func SealKey() string {
	return neo4jtest.TestSealKey.ID + ":" + base64.StdEncoding.EncodeToString(neo4jtest.TestSealKey.Key)
}

// Server is one running server, in-process or a process.
type Server struct {
	// URL is the server's base URL (https when TLS is configured).
	URL string
	// Addr is its host:port.
	Addr string
	// Log is the current run's log (a restart starts a new one).
	Log *Log

	t       testing.TB
	opts    Options
	process bool
	cmd     *exec.Cmd
	// stop asks for a graceful stop: the context of Run ends, or SIGTERM.
	stop func()
	// exited is closed once the server has stopped; err is then its
	// result (Run and Close, or the process's exit status).
	exited chan struct{}
	err    error
}

// Start runs a server in-process and waits until it listens and /healthz
// answers. It is stopped gracefully when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{t: t, opts: opts}
	s.startMain()
	t.Cleanup(s.cleanup)
	s.Ready()
	return s
}

// StartProcess runs the server binary (built once per test binary, see
// Main) and waits until it listens and /healthz answers. It is stopped
// (SIGTERM, then SIGKILL) when the test ends.
func StartProcess(t testing.TB, opts Options) *Server {
	t.Helper()
	s := LaunchProcess(t, opts)
	s.Ready()
	return s
}

// LaunchProcess starts the server binary without waiting for it (see
// Ready), so that a test can start several at once.
func LaunchProcess(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Port == 0 {
		opts.Port = FreePort(t)
	}
	s := &Server{t: t, opts: opts, process: true}
	s.startProcess()
	t.Cleanup(s.cleanup)
	return s
}

// startMain opens internal/app's Main with the options' settings and runs
// it in a goroutine of its own.
func (s *Server) startMain() {
	t := s.t
	t.Helper()
	env := s.environment()
	getenv := func(name string) string {
		v := ""
		for _, kv := range env { // later settings win, as in a process
			if k, val, _ := strings.Cut(kv, "="); k == name {
				v = val
			}
		}
		return v
	}
	cfg, err := config.Load(nil, getenv)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	log := NewLog()
	m := app.NewMain(cfg, log)
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Open(ctx); err != nil {
		cancel()
		t.Fatalf("open: %v\n%s", err, log)
	}
	s.Log, s.stop, s.exited = log, cancel, make(chan struct{})
	s.setAddr(m.Addr(), cfg.TLSCertFile != "")
	go func(exited chan struct{}) {
		defer close(exited)
		err := m.Run(ctx)
		s.err = errors.Join(err, m.Close())
		log.End()
	}(s.exited)
}

// startProcess starts the binary with the options' settings.
func (s *Server) startProcess() {
	t := s.t
	t.Helper()
	var cmd *exec.Cmd
	if s.opts.RunScript {
		// The script execs the binary: the process signalled and waited
		// for is the server's once it runs.
		cmd = exec.Command(filepath.Join(RepoRoot(), "scripts", "run.sh"))
	} else {
		cmd = exec.Command(binary(t))
	}
	cmd.Env = s.environment()
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := NewLog()
	s.cmd, s.Log, s.exited = cmd, log, make(chan struct{})
	s.stop = func() { _ = cmd.Process.Signal(syscall.SIGTERM) }
	s.setAddr(fmt.Sprintf("127.0.0.1:%d", s.opts.Port), s.tls())
	go func(exited chan struct{}) {
		defer close(exited)
		_, _ = io.Copy(log, stderr) // until the process closes stderr
		s.err = cmd.Wait()
		log.End()
	}(s.exited)
}

func (s *Server) setAddr(addr string, tls bool) {
	s.Addr, s.URL = addr, "http://"+addr
	if tls {
		s.URL = "https://" + addr
	}
}

// tls reports whether the options configure TLS.
func (s *Server) tls() bool {
	for _, kv := range s.opts.Env {
		if k, v, _ := strings.Cut(kv, "="); k == "MEMBRANE_TLS_CERT_FILE" {
			return v != ""
		}
	}
	return false
}

// environment is the server's environment: the test process's, with the
// developer's settings that would change the server under test cleared,
// the maintenance jobs off (they would sweep every scope of the shared
// database while other tests run; a test turns them on restricted to its
// scope), the warm-up off (seconds at each of hundreds of starts), vector search off (the model inside Neo4j would embed every
// record the load and soak tests write, minutes of CPU; a test of it sets
// MEMBRANE_EMBEDDING_PROVIDER in Env), then the options.
func (s *Server) environment() []string {
	t, o := s.t, s.opts
	t.Helper()
	uri := o.Neo4jURI
	if uri == "" {
		if uri = os.Getenv("NEO4J_URI"); uri == "" {
			t.Fatal("NEO4J_URI is not set: run the suite with scripts/test.sh, which starts a local Neo4j")
		}
	}
	env := append(os.Environ(),
		"MEMBRANE_API_KEYS=", "MEMBRANE_API_KEYS_FILE=", "MEMBRANE_CONFIG=", "MEMBRANE_EMBEDDING_ENDPOINT=", "MEMBRANE_EMBEDDING_PROVIDER=off",
		"MEMBRANE_NEO4J_WARM_UP_READS=0", "MEMBRANE_JOBS_DECAY=off", "MEMBRANE_JOBS_PRUNE=off", "MEMBRANE_JOBS_CONSOLIDATE=off", "MEMBRANE_JOBS_EMBED=off",
		fmt.Sprintf("MEMBRANE_LISTEN=127.0.0.1:%d", o.Port), "NEO4J_URI="+uri, "MEMBRANE_ENCRYPTION_KEY="+o.EncryptionKey)
	if o.APIKey != "" {
		env = append(env, "MEMBRANE_API_KEYS="+apiKeys(t, o))
	}
	return append(env, o.Env...)
}

// apiKeys is MEMBRANE_API_KEYS for the options' keys.
func apiKeys(t testing.TB, o Options) string {
	t.Helper()
	entries := []map[string]any{{"key_sha256": membrane.HashKey(o.APIKey), "actor": "e2e-admin",
		"role": "admin", "max_sensitivity": "hyper", "scopes": []string{"*"}}}
	for _, p := range o.Principals {
		entries = append(entries, map[string]any{"key_sha256": membrane.HashKey(p.Key), "actor": p.Actor,
			"role": p.Role, "max_sensitivity": "high", "scopes": p.Scopes})
	}
	b, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Ready waits until the server logged "membrane listening" and /healthz
// answers 200.
func (s *Server) Ready() {
	s.t.Helper()
	s.Log.Await(s.t, 0, "membrane listening", startTimeout)
	s.WaitStatus(s.t, "/healthz", http.StatusOK, 10*time.Second)
}

// Exited is closed once the server has stopped (or the process exited).
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Err is how the server ended, once Exited is closed: nil after a clean
// shutdown.
func (s *Server) Err() error {
	<-s.exited
	return s.err
}

// Stop stops the server gracefully (SIGTERM for a process) and fails the
// test unless it ends cleanly within 30 s.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.stop()
	select {
	case <-s.exited:
		if s.err != nil {
			t.Fatalf("server ended with %v after a graceful stop:\n%s", s.err, s.Log)
		}
	case <-time.After(stopTimeout):
		t.Fatalf("server did not stop within %s:\n%s", stopTimeout, s.Log)
	}
}

// cleanup stops the server if the test left it running: gracefully,
// then, for a process that hangs, with SIGKILL.
func (s *Server) cleanup() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.stop()
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		if s.process {
			s.Kill()
			return
		}
		s.t.Errorf("in-process server did not stop within %s:\n%s", stopTimeout, s.Log)
	}
}

// Signal sends sig to the server process.
func (s *Server) Signal(sig os.Signal) error {
	if !s.process {
		return errors.New("apptest: Signal needs a server process (StartProcess)")
	}
	return s.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL to the server process and waits for it to be gone:
// no shutdown step runs, requests and transactions in flight are cut off.
func (s *Server) Kill() {
	if err := s.Signal(syscall.SIGKILL); err != nil {
		s.t.Error(err)
		return
	}
	<-s.exited
}

// Pid is the server process's id (0 in-process).
func (s *Server) Pid() int {
	if !s.process {
		return 0
	}
	return s.cmd.Process.Pid
}

// Restart starts the server again, stopped or killed, with the same
// options and port, and waits until it is ready.
func (s *Server) Restart() {
	s.t.Helper()
	if s.process {
		s.startProcess()
	} else {
		_, port, _ := net.SplitHostPort(s.Addr)
		fmt.Sscan(port, &s.opts.Port)
		s.startMain()
	}
	s.Ready()
}

// WaitStatus polls path until it answers status or the timeout passes
// (the server's state changes without telling the test: a database that
// goes away or comes back).
func (s *Server) WaitStatus(t testing.TB, path string, status int, timeout time.Duration) {
	t.Helper()
	end := time.Now().Add(timeout)
	last := "no answer"
	client := &http.Client{Timeout: 10 * time.Second, Transport: insecureTransport}
	for time.Now().Before(end) {
		resp, err := client.Get(s.URL + path)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == status {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		select {
		case <-s.exited:
			t.Fatalf("membrane exited while waiting for %s:\n%s", path, s.Log)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not answer %d within %s (last: %s); server log:\n%s", path, status, timeout, last, s.Log)
}

// insecureTransport is for the readiness poll only: a server under test
// may serve TLS with a certificate of the test's own, which the test
// checks itself.
var insecureTransport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// The kernel does not hand a just-released ephemeral port out again at
// once, so the small window before the server binds it is harmless here.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// RepoRoot is the module's root directory (scripts/ live there).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

// binary builds the server once per test binary; Main removes it.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "membrane-bin-"); binErr != nil {
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(binDir, "membrane"), ".")
		build.Dir = RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatalf("build: %v", binErr)
	}
	return filepath.Join(binDir, "membrane")
}

// Main runs the tests of a package that uses StartProcess and removes the
// binary they built: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// Binary is the path of the server binary built for this test binary
// (once; Main removes it): for tests of the command line itself.
func Binary(t testing.TB) string { return binary(t) }
