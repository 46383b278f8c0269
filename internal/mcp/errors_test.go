package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// internals are words of what must never reach a caller: Cypher, driver
// and Go runtime text.
var internals = []string{"MATCH", "MERGE ", "RETURN ", "neo4j", "Neo4j", "goroutine", "panic", ".go:", "runtime."}

func noInternals(t *testing.T, s string) {
	t.Helper()
	for _, w := range internals {
		if strings.Contains(s, w) {
			t.Fatalf("%q leaks %q", s, w)
		}
	}
}

// TestToolErrors: every refusal is a tool error (isError) with GraphQL's
// code and message, and the session goes on after each.
func TestToolErrors(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	w := writerIn(scope)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityHigh, Scopes: []string{scope}}
	srv := startServer(t, membranehttp.DefaultHandlerOptions(), w, reader)
	c, rd := srv.connect(t, w.Actor, nil), srv.connect(t, reader.Actor, nil)
	fact := srv.createFact(t, scope, membrane.SensitivityLow, "errors-fact")
	high := srv.createFact(t, scope, membrane.SensitivityHigh, "errors-high")
	elsewhere := srv.createFact(t, other, membrane.SensitivityLow, "errors-elsewhere")

	tests := []struct {
		name   string
		c      *client
		code   string
		tool   string
		args   any
		fields []string // argument names the error must name
	}{
		{"wrong type", c, "BAD_USER_INPUT", "recall", map[string]any{"query": 42}, nil},
		{"unknown argument", c, "BAD_USER_INPUT", "recall", map[string]any{"querry": "x"}, nil},
		{"missing argument", c, "BAD_USER_INPUT", "get_record", map[string]any{}, nil},
		{"arguments not an object", c, "BAD_USER_INPUT", "get_record", []any{1, 2}, nil},
		{"bad enum", c, "BAD_USER_INPUT", "recall", map[string]any{"types": []string{"SEMANTIC"}}, nil},
		{"bad operation", c, "BAD_USER_INPUT", "revise", map[string]any{"operation": "rewrite", "id": fact.ID}, nil},
		{"bad time", c, "BAD_USER_INPUT", "get_record", map[string]any{"id": fact.ID, "as_of": "yesterday"}, []string{"as_of"}},
		{"limit out of range", c, "BAD_USER_INPUT", "recall", map[string]any{"query": "x", "limit": 1000}, []string{"limit"}},
		{"page size out of range", c, "BAD_USER_INPUT", "list_records", map[string]any{"page_size": 501}, []string{"page_size"}},
		{"bad cursor", c, "BAD_USER_INPUT", "list_records", map[string]any{"cursor": "nope"}, []string{"cursor"}},
		{"bad filter", c, "BAD_USER_INPUT", "list_records", map[string]any{"created_after": "2030-01-01T00:00:00Z", "created_before": "2020-01-01T00:00:00Z"}, []string{"created_before"}},
		{"no content", c, "BAD_USER_INPUT", "remember", map[string]any{"content": ""}, []string{"content"}},
		{"bad sensitivity", c, "BAD_USER_INPUT", "remember", map[string]any{"content": "x", "sensitivity": "secret"}, nil},
		{"supersede without evidence", c, "BAD_USER_INPUT", "revise", map[string]any{"operation": "supersede", "id": fact.ID,
			"record": map[string]any{"payload": map[string]any{"subject": "s", "predicate": "p", "object": "o"}}}, []string{"record.payload.semantic.evidence"}},
		{"supersede without a record", c, "BAD_USER_INPUT", "revise", map[string]any{"operation": "supersede", "id": fact.ID}, []string{"record"}},
		{"payload of the wrong shape", c, "BAD_USER_INPUT", "revise", map[string]any{"operation": "fork", "id": fact.ID,
			"record": map[string]any{"payload": map[string]any{"evidence": "none"}}}, []string{"record.payload"}},
		{"merge of one", c, "BAD_USER_INPUT", "revise", map[string]any{"operation": "merge", "ids": []string{fact.ID}, "record": map[string]any{"payload": map[string]any{}}}, []string{"ids"}},
		{"contest without a reference", c, "BAD_USER_INPUT", "revise", map[string]any{"operation": "contest", "id": fact.ID}, []string{"contesting_ref"}},
		{"lineage predicate to relate", c, "BAD_USER_INPUT", "relate", map[string]any{"source_id": fact.ID, "predicate": "supersedes", "target_id": fact.ID}, nil},
		{"missing record", c, "NOT_FOUND", "get_record", map[string]any{"id": membrane.NewID()}, nil},
		{"record in another scope", c, "NOT_FOUND", "get_record", map[string]any{"id": elsewhere.ID}, nil},
		{"revise out of scope", c, "NOT_FOUND", "revise", map[string]any{"operation": "retract", "id": elsewhere.ID}, nil},
		{"stale version", c, "CONFLICT", "revise", map[string]any{"operation": "retract", "id": fact.ID, "expected_version": 7}, nil},
		{"reader writes", rd, "FORBIDDEN", "remember", map[string]any{"content": "x", "scope": scope}, nil},
		{"reader revises", rd, "FORBIDDEN", "forget", map[string]any{"id": fact.ID}, nil},
		{"writer above its ceiling", c, "FORBIDDEN", "remember", map[string]any{"content": "x", "scope": scope, "sensitivity": "high"}, nil},
		{"writer outside its scopes", c, "FORBIDDEN", "remember", map[string]any{"content": "x", "scope": other}, nil},
		{"writer revises a redacted record", c, "FORBIDDEN", "revise", map[string]any{"operation": "retract", "id": high.ID}, nil},
		{"writer deletes", c, "FORBIDDEN", "forget", map[string]any{"id": fact.ID, "delete": true}, nil},
		{"outcome of a fact", c, "FAILED_PRECONDITION", "record_outcome", map[string]any{"record_id": fact.ID, "status": "success"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := tt.c.fail(tt.code, tt.tool, tt.args)
			noInternals(t, te.Message)
			for _, f := range tt.fields {
				if !strings.Contains(te.Text(), f) {
					t.Fatalf("error %q does not name argument %s", te.Text(), f)
				}
			}
			// The session goes on.
			tt.c.ok("get_record", map[string]any{"id": fact.ID}, nil)
		})
	}

	t.Run("same message as GraphQL", func(t *testing.T) {
		// The message is the services' own, as GraphQL shows it.
		id := membrane.NewID()
		te := c.fail("NOT_FOUND", "get_record", map[string]any{"id": id})
		gql := graphQLError(t, srv, srv.keys[w.Actor], `query($id: ID!) { record(id: $id) { id } }`, map[string]any{"id": id})
		if te.Message != gql.Message || te.Code != gql.Code {
			t.Fatalf("MCP %q %q, GraphQL %q %q", te.Code, te.Message, gql.Code, gql.Message)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		// Not a tool error: no such tool is a protocol error, which the
		// session survives.
		_, err := c.s.CallTool(t.Context(), &sdk.CallToolParams{Name: "no_such_tool"})
		if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
			t.Fatalf("unknown tool: %v", err)
		}
		c.ok("get_record", map[string]any{"id": fact.ID}, nil)
	})
}

// gqlErr is a GraphQL error's code and message.
type gqlErr struct{ Code, Message string }

// graphQLError posts query to /graphql with key and returns its first
// error.
func graphQLError(t *testing.T, srv *testServer, key, query string, vars map[string]any) gqlErr {
	t.Helper()
	r := (&gqltest.Client{T: t, URL: srv.URL, Key: key}).Raw(query, vars)
	if len(r.Errors) == 0 {
		t.Fatalf("GraphQL answered no error: %s", r.Body)
	}
	return gqlErr{r.Code(), r.Errors[0].Message}
}

// rpc posts one raw JSON-RPC body to /mcp with header pairs and returns
// the status and the decoded body.
func rpc(t *testing.T, url string, body []byte, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+mcp.Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("status %d, body %q is not JSON", resp.StatusCode, b)
	}
	noInternals(t, string(b))
	return resp.StatusCode, out
}

// rpcError is the code, and the public code in its data, of a JSON-RPC
// error response.
func rpcError(t *testing.T, out map[string]any) (int, string) {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	if e == nil || out["jsonrpc"] != "2.0" {
		t.Fatalf("not a JSON-RPC error: %v", out)
	}
	code, _ := e["code"].(float64)
	data, _ := e["data"].(map[string]any)
	public, _ := data["code"].(string)
	return int(code), public
}

// TestTransportRefusals: what the HTTP server refuses before MCP runs (a
// missing or wrong key, widened trust, a rate or size limit, a message
// that does not parse) is a JSON-RPC error with the public code in its
// data, and a client that gets one can go on.
func TestTransportRefusals(t *testing.T) {
	scope := neo4jtest.Scope(t)
	w := writerIn(scope)
	opts := membranehttp.DefaultHandlerOptions()
	opts.MaxBodyBytes = 64 << 10
	limited := membrane.Principal{Actor: "limited-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	opts.RateLimits = map[membrane.Role]membranehttp.RateLimit{membrane.RoleReader: {Rate: 0.001, Burst: 2}}
	srv := startServer(t, opts, w, limited)
	list := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	bearer := "Bearer " + srv.keys[w.Actor]

	tests := []struct {
		name   string
		body   []byte
		hdr    []string
		status int
		code   int
		public string
	}{
		{"no key", list, nil, 401, mcp.CodeRefused, "UNAUTHENTICATED"},
		{"wrong key", list, []string{"Authorization", "Bearer nope"}, 401, mcp.CodeRefused, "UNAUTHENTICATED"},
		{"widened ceiling", list, []string{"Authorization", bearer, "X-Membrane-Max-Sensitivity", "hyper"}, 403, mcp.CodeRefused, "FORBIDDEN"},
		{"widened scopes", list, []string{"Authorization", bearer, "X-Membrane-Scopes", scope + ",other"}, 403, mcp.CodeRefused, "FORBIDDEN"},
		{"too large", append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"content":"`),
			bytes.Repeat([]byte("x"), 70<<10)...), `"}}}`...), []string{"Authorization", bearer}, 413, -32600, "PAYLOAD_TOO_LARGE"},
		{"not JSON", []byte(`{"jsonrpc":"2.0","id":1,`), []string{"Authorization", bearer}, 400, -32700, ""},
		{"not JSON-RPC", []byte(`{"hello":"world"}`), []string{"Authorization", bearer}, 400, -32600, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := rpc(t, srv.URL, tt.body, tt.hdr...)
			code, public := rpcError(t, out)
			if status != tt.status || code != tt.code || public != tt.public {
				t.Fatalf("status %d, code %d, data code %q; want %d, %d, %q (%v)", status, code, public, tt.status, tt.code, tt.public, out)
			}
			// A refusal answers the request's id, so that the client fails
			// that call only; a message that does not parse has none.
			if id, ok := out["id"]; !ok || (tt.code == -32700 || tt.name == "not JSON-RPC") != (id == nil) || (id != nil && id != float64(1)) {
				t.Fatalf("id = %v (present %v)", id, ok)
			}
		})
	}
	t.Run("rate limit", func(t *testing.T) {
		hdr := []string{"Authorization", "Bearer " + srv.keys[limited.Actor]}
		for i := range 2 {
			if status, out := rpc(t, srv.URL, list, hdr...); status != 200 || out["result"] == nil {
				t.Fatalf("request %d within the burst: %d %v", i, status, out)
			}
		}
		status, out := rpc(t, srv.URL, list, hdr...)
		if code, public := rpcError(t, out); status != 429 || code != mcp.CodeRefused || public != "RATE_LIMITED" {
			t.Fatalf("over the rate: %d %v", status, out)
		}
	})
	t.Run("the Go client survives a refused message", func(t *testing.T) {
		c := srv.connect(t, w.Actor, nil)
		_, err := c.s.CallTool(t.Context(), &sdk.CallToolParams{Name: "remember", Arguments: map[string]any{"content": strings.Repeat("y", 70<<10), "scope": scope}})
		if err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
			t.Fatalf("an oversized call: %v", err)
		}
		c.ok("recall", map[string]any{"scope": scope}, nil)
	})
	t.Run("the Go client is told why it may not connect", func(t *testing.T) {
		_, err := srv.dial(t, "", nil)
		if err == nil || !strings.Contains(err.Error(), "missing API key") {
			t.Fatalf("connect without a key: %v", err)
		}
	})
}

// TestFailuresAreInternal: a tool whose service fails in a way no rule
// names (here a panic: a server wired without its retrieval store) is
// INTERNAL with the generic message, no trace of the cause, and the
// session goes on.
func TestFailuresAreInternal(t *testing.T) {
	svc := membrane.NewServices(membrane.Stores{}, membrane.ServiceOptions{Policy: membrane.DefaultPolicy()})
	srv := mcp.NewServer(svc, mcp.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c := &client{t: t, s: cs}
	for range 2 {
		te := c.fail("INTERNAL", "recall", map[string]any{"query": "anything"})
		if te.Message != "Internal error." {
			t.Fatalf("INTERNAL with message %q", te.Message)
		}
		noInternals(t, te.Text())
	}
	// Arguments are still checked first.
	c.fail("BAD_USER_INPUT", "recall", map[string]any{"limit": -1})
}
