package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// testServer is Membrane's HTTP handler (GraphQL and MCP at /mcp) over the
// test Neo4j, wired as internal/app wires it, with an API key for a fresh
// admin and for each principal a test gives.
type testServer struct {
	URL   string
	db    *neo4j.DB
	svc   *membrane.Services
	keys  map[string]string // actor -> API key
	admin string            // the admin's actor
	// serve starts one more server (a replica: its own services and
	// handler over the same database and keys) and returns its URL.
	serve func(t testing.TB) string
}

// startServer starts a test server with opts; it stops when the test ends.
func startServer(t testing.TB, opts membranehttp.HandlerOptions, principals ...membrane.Principal) *testServer {
	t.Helper()
	db := neo4jtest.DB(t)
	admin := membrane.Principal{Actor: "admin-" + membrane.NewID(), Role: membrane.RoleAdmin,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}}
	ring, keys := gqltest.APIKeys(t, append([]membrane.Principal{admin}, principals...)...)
	srv := &testServer{db: db, keys: keys, admin: admin.Actor}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv.serve = func(t testing.TB) string {
		svc := membrane.NewServices(membrane.Stores{Records: db, Revisions: db, Lineages: db, Retrieval: db, Captures: db, Deletes: db},
			membrane.ServiceOptions{Policy: membrane.DefaultPolicy(), Now: time.Now, Log: log})
		if srv.svc == nil {
			srv.svc = svc
		}
		hs := httptest.NewServer(membranehttp.NewHandler(&graph.Resolver{Services: svc}, db, membrane.NewKeyring(ring), log, opts))
		t.Cleanup(hs.Close)
		return hs.URL
	}
	srv.URL = srv.serve(t)
	return srv
}

// asAdmin is a context with the admin's trust, to write fixtures through
// the services directly (types the tools do not create by themselves).
func (s *testServer) asAdmin(t testing.TB) context.Context {
	return membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust(s.admin))
}

// createFact writes a semantic record in scope at sensitivity sens,
// whose subject is subject, tagged tags, as the admin.
func (s *testServer) createFact(t testing.TB, scope string, sens membrane.Sensitivity, subject string, tags ...string) *membrane.Record {
	t.Helper()
	r, err := s.svc.Ingest.CreateRecord(s.asAdmin(t), factInput(scope, sens, subject, tags...), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// factInput is a semantic record with evidence, as superseding needs.
func factInput(scope string, sens membrane.Sensitivity, subject string, tags ...string) membrane.RecordInput {
	return membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope, Sensitivity: &sens, Tags: tags,
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: subject, Predicate: "is", Object: "known",
			Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "mcp"}}}}}
}

// client is one principal's MCP session over streamable HTTP: the Go
// SDK's client, as an agent's would be.
type client struct {
	t testing.TB
	s *sdk.ClientSession
}

// headers adds fixed headers to every request of a client.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// connect opens a session as actor (its key, "" for none), with extra
// request headers (narrowing).
func (s *testServer) connect(t testing.TB, actor string, extra map[string]string) *client {
	t.Helper()
	sess, err := s.dial(t, actor, extra)
	if err != nil {
		t.Fatalf("connect as %s: %v", actor, err)
	}
	return &client{t: t, s: sess}
}

// dial opens a session as actor, returning the failure.
func (s *testServer) dial(t testing.TB, actor string, extra map[string]string) (*sdk.ClientSession, error) {
	h := map[string]string{}
	if key := s.keys[actor]; key != "" {
		h["Authorization"] = "Bearer " + key
	}
	for k, v := range extra {
		h[k] = v
	}
	hc := &http.Client{Timeout: time.Minute, Transport: headers{base: http.DefaultTransport, h: h}}
	c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sess, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.URL + mcp.Path, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = sess.Close() })
	}
	return sess, err
}

// call calls tool with args; the result may be a tool error.
func (c *client) call(tool string, args any) *sdk.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), time.Minute)
	defer cancel()
	res, err := c.s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

// ok calls tool, which must succeed, and decodes its structured result
// into out (when not nil). The text content must be the same JSON.
func (c *client) ok(tool string, args any, out any) {
	c.t.Helper()
	res := c.call(tool, args)
	if res.IsError {
		c.t.Fatalf("%s(%v): %s", tool, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		c.t.Fatal(err)
	}
	var fromText, fromStruct any
	if json.Unmarshal([]byte(text(res)), &fromText) != nil || json.Unmarshal(b, &fromStruct) != nil || !jsonEqual(fromText, fromStruct) {
		c.t.Fatalf("%s: text %q is not the structured result %s", tool, text(res), b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s: decode %s: %v", tool, b, err)
		}
	}
}

// fail calls tool, which must fail with code, and returns its error.
func (c *client) fail(code, tool string, args any) mcp.ToolError {
	c.t.Helper()
	res := c.call(tool, args)
	te := toolError(c.t, res)
	if te.Code != code {
		c.t.Fatalf("%s(%v): code %s, want %s: %s", tool, args, te.Code, code, text(res))
	}
	return te
}

// toolError is the error a failed tool result carries, checked for its
// form: isError, no structured content, the text "CODE: message".
func toolError(t testing.TB, res *sdk.CallToolResult) mcp.ToolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got %s", text(res))
	}
	var te mcp.ToolError
	b, _ := json.Marshal(res.Meta[mcp.MetaError])
	if err := json.Unmarshal(b, &te); err != nil || te.Code == "" {
		t.Fatalf("tool error without %s: %v %s", mcp.MetaError, err, text(res))
	}
	if res.StructuredContent != nil || !strings.HasPrefix(text(res), te.Code+": "+te.Message) {
		t.Fatalf("tool error text %q, structured %v; want %q first", text(res), res.StructuredContent, te.Code+": "+te.Message)
	}
	return te
}

// text is a result's text content.
func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
