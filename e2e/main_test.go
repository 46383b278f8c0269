// Package e2e_test runs membrane servers over loopback HTTP against a real
// Neo4j, through internal/apptest: a load test in-process, and as the real
// binary in a separate process the faults that only show at process level
// (a database that goes away, a server killed mid-write) and the soak test,
// and MCP clients of two ecosystems against the binary (mcp_test.go).
// Every test starts its own servers on free ports and isolates its data by
// scope.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
)

// repoRoot is the module root (scripts/ live there).
var repoRoot = apptest.RepoRoot()

func TestMain(m *testing.M) { apptest.Main(m) }

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

// newEncryptionKey returns the test suite's encryption key in
// MEMBRANE_ENCRYPTION_KEY form (id:base64). Every server that writes to
// the shared test database must use the same key as the other tests:
// an admin's unscoped read in another test would otherwise meet records it
// cannot open (a test's data is only kept out of others' scoped reads).
func newEncryptionKey(testing.TB) string { return apptest.SealKey() }

// server is one membrane server under test (internal/apptest) and the API
// key its requests carry.
type server struct {
	*apptest.Server
	apiKey string
}

// startServer runs membrane in-process with opts and waits until it is
// ready; it stops when the test ends.
func startServer(t testing.TB, opts apptest.Options) *server {
	t.Helper()
	return &server{Server: apptest.Start(t, opts), apiKey: opts.APIKey}
}

// startProcess runs the membrane binary with opts and waits until it is
// ready: for the tests of what shows only at process level (a kill, an
// outage of the database under a long-running process). It is stopped
// (SIGTERM, then SIGKILL) when the test ends.
func startProcess(t testing.TB, opts apptest.Options) *server {
	t.Helper()
	s := launchProcess(t, opts)
	s.Ready()
	return s
}

// launchProcess starts the membrane binary with opts without waiting for
// it (see Ready), so that a test can start several at once.
func launchProcess(t testing.TB, opts apptest.Options) *server {
	t.Helper()
	return &server{Server: apptest.LaunchProcess(t, opts), apiKey: opts.APIKey}
}

// httpClient keeps enough idle connections for 32 concurrent clients and
// bounds every request, so a hung server fails a test instead of hanging it.
var httpClient = func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 128
	tr.MaxIdleConnsPerHost = 128
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}()

// post sends one GraphQL request. It returns an error only for transport
// failures and undecodable bodies, so that worker goroutines can count them.
func (s *server) post(ctx context.Context, query string, vars map[string]any) (gqltest.Response, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return gqltest.Response{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return gqltest.Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return gqltest.Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return gqltest.Response{Status: resp.StatusCode}, err
	}
	var out gqltest.Response
	if err := json.Unmarshal(b, &out); err != nil {
		return gqltest.Response{Status: resp.StatusCode}, fmt.Errorf("status %d, undecodable body %q: %w", resp.StatusCode, b, err)
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
