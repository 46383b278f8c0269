package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// bridged connects a Go client to a stdio bridge built with o, in memory
// (RunStdio's framing is TestBridgeStdio's).
func bridged(t *testing.T, o mcp.BridgeOptions) *client {
	t.Helper()
	b := mcp.NewBridge(o)
	t.Cleanup(func() { _ = b.Close() })
	ct, st := sdk.NewInMemoryTransports()
	ss, err := b.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bridge-test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{t: t, s: cs}
}

// TestBridge: the stdio bridge forwards every call to the server's /mcp
// with its key and narrowing; the server's answers, errors included, come
// back as they were, and a server it cannot reach or that refuses it is a
// tool error, after which the session goes on.
func TestBridge(t *testing.T) {
	scope := neo4jtest.Scope(t)
	w := writerIn(scope)
	limited := membrane.Principal{Actor: "limited-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	opts := membranehttp.DefaultHandlerOptions()
	opts.RateLimits = map[membrane.Role]membranehttp.RateLimit{membrane.RoleReader: {Rate: 0.001, Burst: 3}}
	srv := startServer(t, opts, w, limited)
	medium := srv.createFact(t, scope, membrane.SensitivityMedium, "bridge-medium")

	c := bridged(t, mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[w.Actor]})
	tools, err := c.s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	want := mcp.ToolNames()
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("the bridge lists %v, want %v", names, want)
	}
	var rem mcp.RememberOutput
	c.ok("remember", map[string]any{"content": "the bridge remembers the deploy window is Tuesday", "scope": scope}, &rem)
	if err := srv.db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	var rec mcp.RecallOutput
	c.ok("recall", map[string]any{"query": "deploy window", "scope": scope}, &rec)
	if len(rec.Hits) == 0 || rec.Hits[0].ID != rem.Record.ID {
		t.Fatalf("recall through the bridge = %+v", rec.Hits)
	}
	c.fail("NOT_FOUND", "get_record", map[string]any{"id": membrane.NewID()})
	c.fail("BAD_USER_INPUT", "recall", map[string]any{"limit": "many"})
	c.fail("FORBIDDEN", "remember", map[string]any{"content": "x", "scope": "not-mine"})
	var got mcp.RecordDetail
	c.ok("get_record", map[string]any{"id": medium.ID}, &got)
	if got.Redacted {
		t.Fatal("the writer's own ceiling shows the medium record redacted")
	}

	t.Run("narrowed", func(t *testing.T) {
		low := "low"
		n := bridged(t, mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[w.Actor], MaxSensitivity: low})
		var got mcp.RecordDetail
		n.ok("get_record", map[string]any{"id": medium.ID}, &got)
		if !got.Redacted || got.Payload != nil || got.Text != "" {
			t.Fatalf("narrowed to low, the medium record is %+v", got)
		}
		none := ""
		n = bridged(t, mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[w.Actor], Scopes: &none})
		n.fail("NOT_FOUND", "get_record", map[string]any{"id": medium.ID})
		wide := bridged(t, mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[w.Actor], MaxSensitivity: "hyper"})
		te := wide.fail("FORBIDDEN", "get_record", map[string]any{"id": medium.ID})
		if !strings.Contains(te.Message, "cannot widen trust") {
			t.Fatalf("widening: %+v", te)
		}
	})
	t.Run("refused key", func(t *testing.T) {
		b := bridged(t, mcp.BridgeOptions{URL: srv.URL, APIKey: "not-a-key"})
		for range 2 { // and again: the session goes on
			te := b.fail("UNAUTHENTICATED", "recall", map[string]any{"query": "x"})
			if te.Message != "invalid API key" {
				t.Fatalf("refused key: %+v", te)
			}
		}
		none := bridged(t, mcp.BridgeOptions{URL: srv.URL})
		none.fail("UNAUTHENTICATED", "recall", map[string]any{"query": "x"})
	})
	t.Run("rate limited", func(t *testing.T) {
		b := bridged(t, mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[limited.Actor]})
		// initialize and the first call use the burst; then refusals.
		code := ""
		for range 4 {
			res := b.call("get_record", map[string]any{"id": medium.ID})
			if res.IsError {
				code = toolError(t, res).Code
			}
		}
		if code != "RATE_LIMITED" {
			t.Fatalf("over the rate through the bridge: last error %q", code)
		}
	})
	t.Run("server down", func(t *testing.T) {
		down := "http://127.0.0.1:1"
		b := bridged(t, mcp.BridgeOptions{URL: down, APIKey: srv.keys[w.Actor]})
		for range 2 {
			te := b.fail("UNAVAILABLE", "recall", map[string]any{"query": "x"})
			if !strings.Contains(te.Message, down) || !strings.Contains(te.Message, "MEMBRANE_URL") {
				t.Fatalf("server down: %+v", te)
			}
		}
	})
}

// TestBridgeStdio: RunStdio speaks newline-delimited JSON-RPC on stdin and
// stdout; a line that is not JSON, not JSON-RPC or too long gets a JSON-RPC
// error and the session goes on; it ends when stdin does.
func TestBridgeStdio(t *testing.T) {
	srv := startServer(t, membranehttp.DefaultHandlerOptions())
	b := mcp.NewBridge(mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[srv.admin]})
	t.Cleanup(func() { _ = b.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- b.RunStdio(context.Background(), inR, outW, 2048)
		_ = outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		got := make(chan map[string]any, 1)
		go func() {
			var m map[string]any
			if lines.Scan() {
				_ = json.Unmarshal(lines.Bytes(), &m)
			}
			got <- m
		}()
		select {
		case m := <-got:
			if m == nil {
				t.Fatal("no answer on stdout")
			}
			return m
		case <-time.After(time.Minute):
			t.Fatal("no answer on stdout within a minute")
		}
		return nil
	}
	errorCode := func(m map[string]any) (float64, string) {
		e, _ := m["error"].(map[string]any)
		data, _ := e["data"].(map[string]any)
		code, _ := e["code"].(float64)
		public, _ := data["code"].(string)
		return code, public
	}

	send(`{"jsonrpc":"2.0","id":1,`)
	if code, _ := errorCode(recv()); code != -32700 {
		t.Fatal("a line that is not JSON: want a parse error")
	}
	send(`{"hello":"world"}`)
	if code, _ := errorCode(recv()); code != -32600 {
		t.Fatal("JSON that is not JSON-RPC: want an invalid request")
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"pad":%q}}`, strings.Repeat("p", 5000)))
	if code, public := errorCode(recv()); code != -32600 || public != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("a line over the limit: code %v %q", code, public)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := recv(); m["id"] != float64(3) || m["result"] == nil {
		t.Fatalf("initialize after the refusals: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_record","arguments":{"id":"no-such-record"}}}`)
	m := recv()
	res, _ := m["result"].(map[string]any)
	if m["id"] != float64(4) || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "NOT_FOUND") {
		t.Fatalf("a call through stdio: %v", m)
	}
	_ = inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunStdio after stdin ended: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("RunStdio did not end with stdin")
	}
}
