package http_test

import (
	"bufio"
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

	"github.com/membrane/membrane/internal/feed"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// withFeed gives a test server a change-feed hub of its own, ticking fast,
// that stops with the test.
func withFeed(t testing.TB) (func(*wiring), **feed.Hub) {
	var hub *feed.Hub
	return func(w *wiring) {
		hub = feed.NewHub(w.DB, feed.Config{Interval: 20 * time.Millisecond, Holder: t.Name()}, nil)
		w.Stores.Feed, w.Feed = w.DB, hub
		// Stopped and waited for, so that no tick reaches the database
		// after the test (another test may count transactions).
		stop := hub.Go()
		t.Cleanup(func() {
			hub.Close()
			stop()
		})
	}, &hub
}

// stream is one open subscription over SSE.
type stream struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan gqlResponse
	status int
}

// subscribeSSE opens a subscription over SSE as c's principal.
func (c *client) subscribeSSE(t *testing.T, url, query string, vars map[string]any) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &stream{t: t, cancel: cancel, events: make(chan gqlResponse, 100), status: resp.StatusCode}
	t.Cleanup(cancel)
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
				if event == "complete" {
					return
				}
			case strings.HasPrefix(line, "data: ") && event == "next":
				// Undecodable data stays an empty response, which fails
				// the test that reads it.
				var r gqlResponse
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r)
				r.body = []byte(strings.TrimPrefix(line, "data: "))
				select {
				case s.events <- r:
				case <-ctx.Done(): // the test stopped reading
					return
				}
			}
		}
	}()
	return s
}

// next returns the next event, failing the test after 10 s.
func (s *stream) next() gqlResponse {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("subscription ended")
		}
		return e
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10s")
	}
	return gqlResponse{}
}

// ended reports whether the stream completes within 10 s.
func (s *stream) ended() bool {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

type change struct {
	Cursor   string
	RecordID string
	Action   string
	Redacted bool
	Record   *struct {
		ID      string
		Payload *struct{ Subject string }
	}
}

func decodeChange(t *testing.T, r gqlResponse) change {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("event errors: %+v", r.Errors)
	}
	var out struct{ RecordChanged change }
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return out.RecordChanged
}

const recordChangedQ = `subscription($f: ChangeFilter, $after: String) {
  recordChanged(filter: $f, after: $after) {
    cursor recordId action redacted
    record { id payload { ... on SemanticPayload { subject } } }
  }
}`

func changeCursor(t *testing.T, c *client) string {
	t.Helper()
	var out struct{ ChangeCursor string }
	c.do(`{ changeCursor }`, nil, &out)
	return out.ChangeCursor
}

// TestRecordChangedOverWebSocket speaks graphql-transport-ws, with the API
// key in connection_init as browsers must.
func TestRecordChangedOverWebSocket(t *testing.T) {
	setup, _ := withFeed(t)
	c := newClientWith(t, setup)
	scope := neo4jtest.Scope(t)
	wsURL := "ws" + strings.TrimPrefix(c.url, "http") + "/graphql"

	dial := func(t *testing.T, key string) *websocket.Conn {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.CloseNow() })
		if err := wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + key}}); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	read := func(t *testing.T, conn *websocket.Conn) map[string]any {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		for {
			var m map[string]any
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				t.Fatal(err)
			}
			if m["type"] != "ping" && m["type"] != "pong" && m["type"] != "ka" {
				return m
			}
		}
	}

	t.Run("events", func(t *testing.T) {
		conn := dial(t, c.key)
		if m := read(t, conn); m["type"] != "connection_ack" {
			t.Fatalf("got %v, want connection_ack", m)
		}
		from := changeCursor(t, c)
		id := c.create(scope, "SEMANTIC", fact("ws"), nil)
		ctx := t.Context()
		if err := wsjson.Write(ctx, conn, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
			"query": recordChangedQ, "variables": map[string]any{"after": from, "f": map[string]any{"scopes": []any{scope}}}}}); err != nil {
			t.Fatal(err)
		}
		m := read(t, conn)
		b, _ := json.Marshal(m["payload"])
		var r gqlResponse
		_ = json.Unmarshal(b, &r)
		if m["type"] != "next" || decodeChange(t, r).RecordID != id {
			t.Fatalf("got %v, want next with the CREATE of %s", m, id)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		conn := dial(t, "wrong")
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		for {
			var m map[string]any
			err := wsjson.Read(ctx, conn, &m)
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
	setup, _ := withFeed(t)
	c := newClientWith(t, setup)
	for _, body := range []string{`{"query": 5, "secret": "payload-text-1"}`, `{"query": "payload-text-2`, `[1,2]`} {
		req, _ := http.NewRequest(http.MethodPost, c.url+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+c.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out gqlResponse
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
	setup, _ := withFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.RequestTimeout = timeout
	c := newClientFull(t, setup, opts)
	// The cursor and the writes go through a second server, of the default
	// timeout: under load they may take longer than 200 ms themselves, and
	// this test is about the subscription, which sees them through the
	// database as it sees any replica's writes.
	writerSetup, _ := withFeed(t)
	w := newClientWith(t, writerSetup)
	scope := neo4jtest.Scope(t)
	s := c.subscribeSSE(t, c.url, recordChangedQ, map[string]any{"after": changeCursor(t, w), "f": map[string]any{"scopes": []any{scope}}})
	for i := range 2 {
		id := w.create(scope, "SEMANTIC", fact(fmt.Sprint("f", i)), nil)
		if e := decodeChange(t, s.next()); e.RecordID != id {
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
	setup, _ := withFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.CORS.AllowedOrigins = []string{"https://console.example.com"}
	c := newClientFull(t, setup, opts)
	wsURL := "ws" + strings.TrimPrefix(c.url, "http") + "/graphql"
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
	setup, hub := withFeed(t)
	o := newObserved(t, false, setup)
	gauge := `membrane_graphql_subscriptions_active{kind="recordChanged"}`
	scope := neo4jtest.Scope(t)
	s := o.subscribeSSE(t, o.url, recordChangedQ, map[string]any{"after": changeCursor(t, o.client), "f": map[string]any{"scopes": []any{scope}}})
	o.create(scope, "SEMANTIC", fact("metered"), nil)
	s.next()
	if got := o.scrape()[gauge]; got != 1 {
		t.Fatalf("%s = %v while streaming, want 1", gauge, got)
	}
	(*hub).Close()
	if !s.ended() {
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
	setup, _ := withFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.RateLimits = map[membrane.Role]membranehttp.RateLimit{}
	for _, role := range []membrane.Role{membrane.RoleReader, membrane.RoleWriter, membrane.RoleAdmin} {
		opts.RateLimits[role] = membranehttp.RateLimit{Rate: 0.001, Burst: 1}
	}
	other := membrane.Principal{Actor: "other-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"x"}}
	c := newClientFull(t, setup, opts, other)
	wsURL := "ws" + strings.TrimPrefix(c.url, "http") + "/graphql"
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
		{c.key, "connection_ack"},
		{c.key, "4429"},
		{c.keys[other.Actor], "connection_ack"},
	} {
		if got := open(tc.key); got != tc.want {
			t.Fatalf("socket %d: %s, want %s", i, got, tc.want)
		}
	}
}
