// Package e2e_test runs the real membrane binary as a separate process over
// loopback HTTP, against a real Neo4j: faults that only show at process
// level (a database that goes away, a server killed mid-write) and a load
// test. TestMain builds the binary once; every test starts its own server
// processes on free ports and isolates its data by scope.
package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// binary is the membrane server built by TestMain; repoRoot is the module
// root (scripts/ live there).
var binary, repoRoot string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot = root
	dir, err := os.MkdirTemp("", "membrane-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Built once for the whole package: the tests start several processes,
	// and `go run` would rebuild (or at least re-link) for each.
	binary = filepath.Join(dir, "membrane")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// neo4jURI returns the shared test database, failing like the other
// packages when the suite is not run through scripts/test.sh.
func neo4jURI(t testing.TB) string {
	t.Helper()
	uri := os.Getenv("NEO4J_URI")
	if uri == "" {
		t.Fatal("NEO4J_URI is not set: run the suite with scripts/test.sh, which starts a local Neo4j")
	}
	return uri
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// The kernel does not hand a just-released ephemeral port out again at
// once, so the small window before the caller binds it is harmless here.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serverOptions says how to start a membrane process.
type serverOptions struct {
	neo4jURI string
	// apiKey, when set, is the only API key (an admin over every scope);
	// empty runs the server in open dev mode.
	apiKey string
	// encryptionKey is MEMBRANE_ENCRYPTION_KEY; empty means none.
	encryptionKey string
	// port to listen on; 0 picks a free one. Restarts reuse the old one.
	port int
	// principals are further API keys beside apiKey (which must then be
	// set): tests that need several principals, each with its own rate
	// limit and role.
	principals []testPrincipal
}

// testPrincipal is one API key and the principal it authenticates.
type testPrincipal struct {
	key, actor, role string
	scopes           []string
}

// server is one membrane process.
type server struct {
	t    testing.TB
	opts serverOptions
	cmd  *exec.Cmd
	url  string
	logs *logBuffer
	// exited is closed when the process has exited (and been reaped).
	exited chan struct{}
}

// logBuffer keeps a process's output for failure messages and signals the
// first line containing a marker.
type logBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	mark  string
	found chan struct{}
	once  sync.Once
}

func (l *logBuffer) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		l.mu.Lock()
		l.buf.WriteString(line)
		l.buf.WriteByte('\n')
		l.mu.Unlock()
		if strings.Contains(line, l.mark) {
			l.once.Do(func() { close(l.found) })
		}
	}
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newEncryptionKey returns the test suite's encryption key in
// MEMBRANE_ENCRYPTION_KEY form (id:base64). Every process that writes to
// the shared test database must use the same key as the other tests:
// an admin's unscoped read in another test would otherwise meet records it
// cannot open (a test's data is only kept out of others' scoped reads).
func newEncryptionKey(t testing.TB) string {
	t.Helper()
	return neo4jtest.TestSealKey.ID + ":" + base64.StdEncoding.EncodeToString(neo4jtest.TestSealKey.Key)
}

// startServer starts membrane with opts and waits until it logs
// "membrane listening" and /healthz answers. The process is stopped (SIGTERM,
// then SIGKILL) when the test ends.
func startServer(t testing.TB, opts serverOptions) *server {
	t.Helper()
	s := launchServer(t, opts)
	s.ready()
	return s
}

// launchServer starts membrane with opts without waiting for it (see
// ready), so that a test can start several at once.
func launchServer(t testing.TB, opts serverOptions) *server {
	t.Helper()
	if opts.port == 0 {
		opts.port = freePort(t)
	}
	s := &server{t: t, opts: opts, url: fmt.Sprintf("http://127.0.0.1:%d", opts.port)}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	t := s.t
	t.Helper()
	env := append(os.Environ(),
		"MEMBRANE_LISTEN="+fmt.Sprintf("127.0.0.1:%d", s.opts.port),
		"NEO4J_URI="+s.opts.neo4jURI,
		// The maintenance jobs would sweep every scope of the shared
		// database while other packages' tests run: keep them off.
		"MEMBRANE_JOBS_DECAY=off", "MEMBRANE_JOBS_PRUNE=off", "MEMBRANE_JOBS_CONSOLIDATE=off",
		"MEMBRANE_API_KEYS=", "MEMBRANE_API_KEYS_FILE=", "MEMBRANE_CONFIG=", "MEMBRANE_EMBEDDING_ENDPOINT=",
		"MEMBRANE_ENCRYPTION_KEY="+s.opts.encryptionKey,
	)
	if s.opts.apiKey != "" {
		entries := []map[string]any{{"key_sha256": membrane.HashKey(s.opts.apiKey), "actor": "e2e-admin",
			"role": "admin", "max_sensitivity": "hyper", "scopes": []string{"*"}}}
		for _, p := range s.opts.principals {
			entries = append(entries, map[string]any{"key_sha256": membrane.HashKey(p.key), "actor": p.actor,
				"role": p.role, "max_sensitivity": "high", "scopes": p.scopes})
		}
		keys, err := json.Marshal(entries)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "MEMBRANE_API_KEYS="+string(keys))
	}
	cmd := exec.Command(binary)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	s.logs = &logBuffer{mark: "membrane listening", found: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		s.logs.consume(stderr)
		_ = cmd.Wait()
		close(exited)
	}(s.exited)
}

// ready waits until the server logged "membrane listening" and /healthz
// answers.
func (s *server) ready() {
	t := s.t
	t.Helper()
	deadline := time.After(2 * time.Minute)
	select {
	case <-s.logs.found:
	case <-s.exited:
		t.Fatalf("membrane exited during startup:\n%s", s.logs)
	case <-deadline:
		s.kill()
		t.Fatalf("membrane did not log %q within 2m:\n%s", "membrane listening", s.logs)
	}
	s.waitFor(t, "/healthz", http.StatusOK, 10*time.Second)
}

// waitFor polls path until it answers status or the timeout passes.
func (s *server) waitFor(t testing.TB, path string, status int, timeout time.Duration) {
	t.Helper()
	end := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(end) {
		resp, err := httpClient.Get(s.url + path)
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
			t.Fatalf("membrane exited while waiting for %s:\n%s", path, s.logs)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not answer %d within %s (last: %s); server log:\n%s", path, status, timeout, last, s.logs)
}

// kill sends SIGKILL and waits for the process to be gone: no shutdown
// hook runs, in-flight requests and transactions are cut off.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop shuts the server down gracefully, killing it if that hangs.
func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
	}
}

// restart starts a new process with the same options and port.
func (s *server) restart() {
	s.t.Helper()
	s.start()
	s.ready()
}

// httpClient keeps enough idle connections for 32 concurrent clients and
// bounds every request, so a hung server fails a test instead of hanging it.
var httpClient = func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 128
	tr.MaxIdleConnsPerHost = 128
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}()

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	Status int             `json:"-"`
}

// code is the extensions.code of the first error, "" when there is none.
func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// post sends one GraphQL request. It returns an error only for transport
// failures and undecodable bodies, so that worker goroutines can count them.
func (s *server) post(ctx context.Context, query string, vars map[string]any) (gqlResponse, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return gqlResponse{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return gqlResponse{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.opts.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.opts.apiKey)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return gqlResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return gqlResponse{Status: resp.StatusCode}, err
	}
	var out gqlResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return gqlResponse{Status: resp.StatusCode}, fmt.Errorf("status %d, undecodable body %q: %w", resp.StatusCode, b, err)
	}
	out.Status = resp.StatusCode
	return out, nil
}

// do sends a request that must succeed and decodes its data into out.
func (s *server) do(t testing.TB, query string, vars map[string]any, out any) {
	t.Helper()
	resp, err := s.post(context.Background(), query, vars)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) > 0 || resp.Status != http.StatusOK {
		t.Fatalf("status %d, errors %+v", resp.Status, resp.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			t.Fatalf("decode %s: %v", resp.Data, err)
		}
	}
}

// scope returns a scope unique to this test run.
func scope(t testing.TB) string {
	return "e2e:" + strings.NewReplacer("/", ".", " ", "_").Replace(t.Name()) + ":" + membrane.NewID()
}

// factInput is a semantic record for createRecord and the revisions.
func factInput(scope, subject string) map[string]any {
	return map[string]any{"type": "SEMANTIC", "scope": scope, "tags": []string{"e2e"},
		"payload": map[string]any{"semantic": map[string]any{"subject": subject, "predicate": "is", "object": "x",
			"evidence": []any{map[string]any{"sourceType": "test", "sourceId": "e2e"}}}},
		"provenance": map[string]any{"sources": []any{map[string]any{"kind": "EVENT", "ref": "e2e"}}}}
}

const createQ = `mutation($in: RecordInput!) { createRecord(input: $in, actor: "e2e") { id } }`
