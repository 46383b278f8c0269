package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRecordChangedOverWebSocket speaks graphql-transport-ws, with the API
// key in connection_init as browsers must.
func TestRecordChangedOverWebSocket(t *testing.T) {
	setup, _ := gqltest.WithFeed(t)
	c := gqltest.NewWith(t, setup)
	scope := neo4jtest.Scope(t)
	t.Run("events", func(t *testing.T) {
		ws := c.DialWS(t, false)
		ws.Init()
		if m := ws.ReadOp(); m["type"] != "connection_ack" {
			t.Fatalf("got %v, want connection_ack", m)
		}
		from := c.ChangeCursor()
		id := c.Create(scope, "SEMANTIC", gqltest.Fact("ws"), nil)
		ws.Send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": gqltest.RecordChangedQuery, "variables": map[string]any{"after": from, "f": map[string]any{"scopes": []any{scope}}}}})
		m := ws.ReadOp()
		b, _ := json.Marshal(m["payload"])
		var r gqltest.Response
		_ = json.Unmarshal(b, &r)
		if m["type"] != "next" || gqltest.DecodeChange(t, r).RecordID != id {
			t.Fatalf("got %v, want next with the CREATE of %s", m, id)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		ws := c.WithKey("wrong").DialWS(t, false)
		ws.Init()
		for {
			m, err := ws.Next()
			if err != nil {
				if websocket.CloseStatus(err) != 4401 {
					t.Fatalf("closed with %v, want 4401", err)
				}
				return
			}
			if m["type"] == "connection_ack" {
				t.Fatal("connection acknowledged with a wrong key")
			}
		}
	})
}

// TestSSEMalformedBody: an SSE request whose body is not a GraphQL request
// gets a coded 400, and its text reaches no log (gqlgen's SSE transport
// would print it with the standard logger).
func TestSSEMalformedBody(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	setup, _ := gqltest.WithFeed(t)
	c := gqltest.NewWith(t, setup)
	for _, body := range []string{`{"query": 5, "secret": "payload-text-1"}`, `{"query": "payload-text-2`, `[1,2]`} {
		req, _ := http.NewRequest(http.MethodPost, c.URL+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+c.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out gqltest.Response
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
			t.Errorf("body %s: status %d errors %+v, want 400 BAD_USER_INPUT", body, resp.StatusCode, out.Errors)
		}
	}
	if strings.Contains(logged.String(), "payload-text") {
		t.Fatalf("request body logged: %s", logged.String())
	}
}

// TestSubscriptionOutlivesRequestTimeout: request_timeout bounds each
// query's and mutation's work, not how long a subscription stays open nor
// how long it may wait, idle, for the next change.
func TestSubscriptionOutlivesRequestTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	setup, _ := gqltest.WithFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.RequestTimeout = timeout
	c := gqltest.NewFull(t, setup, opts)
	// The cursor and the writes go through a second server, of the default
	// timeout: under load they may take longer than 200 ms themselves, and
	// this test is about the subscription, which sees them through the
	// database as it sees any replica's writes.
	writerSetup, _ := gqltest.WithFeed(t)
	w := gqltest.NewWith(t, writerSetup)
	scope := neo4jtest.Scope(t)
	s := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, map[string]any{"after": w.ChangeCursor(), "f": map[string]any{"scopes": []any{scope}}})
	for i := range 2 {
		id := w.Create(scope, "SEMANTIC", gqltest.Fact(fmt.Sprint("f", i)), nil)
		if e := gqltest.DecodeChange(t, s.Next()); e.RecordID != id {
			t.Fatalf("event for %s, want %s", e.RecordID, id)
		}
		// The scenario, not synchronisation: nothing changes for longer
		// than the request timeout.
		<-time.After(3 * timeout)
	}
}

// TestWebSocketOrigins: a browser page of another origin may open a
// subscription socket only when CORS allows that origin.
func TestWebSocketOrigins(t *testing.T) {
	setup, _ := gqltest.WithFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.CORS.AllowedOrigins = []string{"https://console.example.com"}
	c := gqltest.NewFull(t, setup, opts)
	wsURL := "ws" + strings.TrimPrefix(c.URL, "http") + "/graphql"
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"https://console.example.com", true},
		{"http://console.example.com", false}, // the scheme counts, as for CORS
		{"https://evil.example.com", false},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			conn, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{"graphql-transport-ws"}})
			if tc.ok {
				if err != nil {
					t.Fatalf("dial from %q: %v", tc.origin, err)
				}
				conn.CloseNow()
				return
			}
			if err == nil {
				conn.CloseNow()
				t.Fatalf("dial from %q accepted", tc.origin)
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("dial from %q: %v, want 403", tc.origin, err)
			}
		})
	}
}

// TestSubscriptionMetrics: the real subscriptions, served through the
// observed handler as internal/app serves them, show in the active
// subscriptions gauge while they stream and leave it when they end.
func TestSubscriptionMetrics(t *testing.T) {
	setup, hub := gqltest.WithFeed(t)
	o := newObserved(t, false, setup)
	gauge := `membrane_graphql_subscriptions_active{kind="recordChanged"}`
	scope := neo4jtest.Scope(t)
	s := o.SubscribeSSE(t, o.URL, gqltest.RecordChangedQuery, map[string]any{"after": o.client.ChangeCursor(), "f": map[string]any{"scopes": []any{scope}}})
	o.Create(scope, "SEMANTIC", gqltest.Fact("metered"), nil)
	s.Next()
	if got := o.scrape()[gauge]; got != 1 {
		t.Fatalf("%s = %v while streaming, want 1", gauge, got)
	}
	(*hub).Close()
	if !s.Ended() {
		t.Fatal("subscription did not end")
	}
	if got := o.scrape()[gauge]; got != 0 {
		t.Fatalf("%s = %v after the end, want 0", gauge, got)
	}
}

// TestWebSocketRateLimit: a socket that authenticates in connection_init
// is charged to its principal there (not, keyless at its upgrade, to one
// bucket shared by every such socket): over its burst a principal's next
// socket is closed with 4429, while another principal's is accepted.
func TestWebSocketRateLimit(t *testing.T) {
	setup, _ := gqltest.WithFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.RateLimits = map[membrane.Role]membranehttp.RateLimit{}
	for _, role := range []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin} {
		opts.RateLimits[role] = membranehttp.RateLimit{Rate: 0.001, Burst: 1}
	}
	other := membrane.Principal{Actor: "other-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"x"}}
	c := gqltest.NewFull(t, setup, opts, other)
	wsURL := "ws" + strings.TrimPrefix(c.URL, "http") + "/graphql"
	// open dials a socket, sends connection_init with key, and returns the
	// type of the answer, or the close code.
	open := func(key string) string {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer conn.CloseNow()
		if err := wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + key}}); err != nil {
			t.Fatal(err)
		}
		for {
			var m map[string]any
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				return fmt.Sprint(int(websocket.CloseStatus(err)))
			}
			if m["type"] == "connection_ack" {
				return "connection_ack"
			}
		}
	}
	for i, tc := range []struct{ key, want string }{
		{c.Key, "connection_ack"},
		{c.Key, "4429"},
		{c.Keys[other.Actor], "connection_ack"},
	} {
		if got := open(tc.key); got != tc.want {
			t.Fatalf("socket %d: %s, want %s", i, got, tc.want)
		}
	}
}
