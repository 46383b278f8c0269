package gqltest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/membrane/membrane/internal/feed"
)

// eventTimeout bounds every wait for a subscription's next message: long
// enough for a busy machine, short enough that a lost event fails the test
// rather than its deadline.
const eventTimeout = 10 * time.Second

// WithFeed returns a setup that gives a test server a change-feed hub of
// its own, ticking fast, that stops with the test, and where the hub will
// be once the setup ran.
func WithFeed(t testing.TB) (func(*Wiring), **feed.Hub) {
	var hub *feed.Hub
	return func(w *Wiring) {
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

// Stream is one open subscription over SSE.
type Stream struct {
	t      testing.TB
	cancel context.CancelFunc
	events chan Response
	// Status is the HTTP status of the response that opened the stream.
	Status int
}

// SSERequest is the request that opens a subscription over SSE at the
// server of url, unauthorized (the caller sets its key).
func SSERequest(ctx context.Context, url, query string, vars map[string]any) *http.Request {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req
}

// ScanSSE reads an SSE response body, calling next with the data of each
// "next" event in order until next returns false or the stream completes
// or ends; it returns the body's read error, if any.
func ScanSSE(body io.Reader, next func(data []byte) bool) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			if event == "complete" {
				return nil
			}
		case strings.HasPrefix(line, "data: ") && event == "next":
			if !next([]byte(strings.TrimPrefix(line, "data: "))) {
				return nil
			}
		}
	}
	return sc.Err()
}

// SubscribeSSE opens a subscription over SSE at the server of url (one of
// c's servers) as c's principal. The stream closes with the test.
func (c *Client) SubscribeSSE(t testing.TB, url, query string, vars map[string]any) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req := SSERequest(ctx, url, query, vars)
	req.Header.Set("Authorization", "Bearer "+c.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &Stream{t: t, cancel: cancel, events: make(chan Response, 100), Status: resp.StatusCode}
	t.Cleanup(cancel)
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		_ = ScanSSE(resp.Body, func(data []byte) bool {
			// Undecodable data stays an empty response, which fails the
			// test that reads it.
			var r Response
			_ = json.Unmarshal(data, &r)
			r.Body = data
			select {
			case s.events <- r:
				return true
			case <-ctx.Done(): // the test stopped reading
				return false
			}
		})
	}()
	return s
}

// Next returns the next event, failing the test after 10 s.
func (s *Stream) Next() Response {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("subscription ended")
		}
		return e
	case <-time.After(eventTimeout):
		s.t.Fatal("no event within 10s")
	}
	return Response{}
}

// Ended reports whether the stream completes within 10 s.
func (s *Stream) Ended() bool {
	timeout := time.After(eventTimeout)
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

// Close hangs up: the client closes the stream's connection.
func (s *Stream) Close() { s.cancel() }

// WebSocketURL is the graphql-transport-ws endpoint of the server at url.
func WebSocketURL(url string) string {
	return "ws" + strings.TrimPrefix(url, "http") + "/graphql"
}

// WS is one graphql-transport-ws socket of a test.
type WS struct {
	t    testing.TB
	Conn *websocket.Conn
	key  string // sent in connection_init; empty when sent at the upgrade
}

// DialWS opens a graphql-transport-ws socket to c's server as c's
// principal; with header the key goes in the upgrade request's
// Authorization header, else InitPayload carries it (as browsers must send
// it: they cannot set the upgrade's headers). The socket closes with the
// test.
func (c *Client) DialWS(t testing.TB, header bool) *WS {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), eventTimeout)
	defer cancel()
	o := &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}}
	if header {
		o.HTTPHeader = http.Header{"Authorization": {"Bearer " + c.Key}}
	}
	conn, _, err := websocket.Dial(ctx, WebSocketURL(c.URL), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	ws := &WS{t: t, Conn: conn}
	if !header {
		ws.key = c.Key
	}
	return ws
}

// InitPayload is the payload of the socket's connection_init.
func (ws *WS) InitPayload() map[string]any {
	if ws.key == "" {
		return map[string]any{}
	}
	return map[string]any{"Authorization": "Bearer " + ws.key}
}

// Init sends connection_init with InitPayload.
func (ws *WS) Init() {
	ws.t.Helper()
	ws.Send(map[string]any{"type": "connection_init", "payload": ws.InitPayload()})
}

// Send writes one message, failing the test after 10 s.
func (ws *WS) Send(m map[string]any) {
	ws.t.Helper()
	ctx, cancel := context.WithTimeout(ws.t.Context(), eventTimeout)
	defer cancel()
	if err := wsjson.Write(ctx, ws.Conn, m); err != nil {
		ws.t.Fatal(err)
	}
}

// Read returns the next message, failing the test when the socket closes.
func (ws *WS) Read() map[string]any {
	ws.t.Helper()
	m, err := ws.Next()
	if err != nil {
		ws.t.Fatal(err)
	}
	return m
}

// ReadOp is Read passing over keep-alives (ping, pong, ka).
func (ws *WS) ReadOp() map[string]any {
	ws.t.Helper()
	for {
		if m := ws.Read(); m["type"] != "ping" && m["type"] != "pong" && m["type"] != "ka" {
			return m
		}
	}
}

// Next returns the next message or the error that ended the socket
// (waiting 10 s at most).
func (ws *WS) Next() (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ws.t.Context(), eventTimeout)
	defer cancel()
	var m map[string]any
	err := wsjson.Read(ctx, ws.Conn, &m)
	return m, err
}

// Change is a recordChanged event, as RecordChangedQuery selects it.
type Change struct {
	Cursor   string
	RecordID string
	Action   string
	Redacted bool
	Record   *struct {
		ID      string
		Payload *struct{ Subject string }
	}
}

// RecordChangedQuery subscribes to recordChanged with an optional filter
// ($f) and resume cursor ($after).
const RecordChangedQuery = `subscription($f: ChangeFilter, $after: String) {
  recordChanged(filter: $f, after: $after) {
    cursor recordId action redacted
    record { id payload { ... on SemanticPayload { subject } } }
  }
}`

// DecodeChange returns the change an event of RecordChangedQuery carries,
// failing the test when the event has errors.
func DecodeChange(t testing.TB, r Response) Change {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("event errors: %+v", r.Errors)
	}
	var out struct{ RecordChanged Change }
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return out.RecordChanged
}

// ChangeCursor returns the change feed's current cursor, as c sees it.
func (c *Client) ChangeCursor() string {
	c.T.Helper()
	var out struct{ ChangeCursor string }
	c.Do(`{ changeCursor }`, nil, &out)
	return out.ChangeCursor
}
