package http_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRateLimit: each principal has its role's token bucket, keyed by its
// actor; over it, a request is 429 RATE_LIMITED with Retry-After (whole
// seconds, rounded up) and runs nothing.
func TestRateLimit(t *testing.T) {
	admin, a, b, clk := limitedServer(t, func(opts *membranehttp.HandlerOptions) {
		opts.RateLimits = map[membrane.Role]membranehttp.RateLimit{membrane.RoleWriter: {Rate: 0.3, Burst: 2}}
	})
	q := map[string]any{"query": `{ records(first: 0) { nodes { id } } }`}

	steps := []limitStep{
		{"first of the burst", a, nil, 0, http.StatusOK, ""},
		{"second of the burst", a, nil, 0, http.StatusOK, ""},
		{"over the burst", a, nil, 0, http.StatusTooManyRequests, "4"}, // 1 / 0.3 = 3.33 s
		{"another principal has its own bucket", b, nil, 0, http.StatusOK, ""},
		{"a role without a limit", admin, nil, 0, http.StatusOK, ""},
		{"still waiting", a, nil, 3 * time.Second, http.StatusTooManyRequests, "1"},
		{"refilled", a, nil, 400 * time.Millisecond, http.StatusOK, ""},
		{"empty again", a, nil, 0, http.StatusTooManyRequests, "4"},
	}
	checkLimitSteps(t, admin, clk, steps, func(s limitStep) gqltest.Response { return s.c.Post(q) })
}

// TestBodyLimit: a body over the limit is 413 PAYLOAD_TOO_LARGE whether or
// not its length was announced.
func TestBodyLimit(t *testing.T) {
	opts := membranehttp.DefaultHandlerOptions()
	opts.MaxBodyBytes = 1000
	c := gqltest.NewOpts(t, opts)
	small := `{"query": "{ records(first: 0) { nodes { id } } }"}`
	large := `{"query": "{ records(first: 0) { nodes { id } } }", "variables": {"pad": "` + strings.Repeat("x", 2000) + `"}}`
	// unsized hides a body's length, so the request is sent chunked.
	unsized := func(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }
	tests := []struct {
		name   string
		body   io.Reader
		status int
	}{
		{"under the limit", bytes.NewReader([]byte(small)), http.StatusOK},
		{"over the limit", bytes.NewReader([]byte(large)), http.StatusRequestEntityTooLarge},
		{"under the limit, chunked", unsized(small), http.StatusOK},
		{"over the limit, chunked", unsized(large), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Send(http.MethodPost, "/graphql", tt.body, map[string]string{"Content-Type": "application/json"})
			if r.Status != tt.status {
				t.Fatalf("status = %d: %s", r.Status, r.Body)
			}
			if tt.status == http.StatusRequestEntityTooLarge && r.Code() != "PAYLOAD_TOO_LARGE" {
				t.Fatalf("code = %q", r.Code())
			}
		})
	}
}

// TestBodyBudget: each principal's request body bytes are charged to a
// bucket of its own (BodyBytesPerSecond, in bursts of one largest body);
// a body over what it holds is 429 RATE_LIMITED with Retry-After and runs
// nothing, whether its length was declared or it came chunked.
func TestBodyBudget(t *testing.T) {
	admin, a, b, clk := limitedServer(t, func(opts *membranehttp.HandlerOptions) {
		opts.BodyBytesPerSecond = 1000
		opts.MaxBodyBytes = 3000
	})
	// body is a query of exactly 1,400 bytes.
	body := func() string {
		q := `{"query": "{ records(first: 0) { nodes { id } } }", "variables": {"pad": "`
		return q + strings.Repeat("x", 1400-len(q)-3) + `"}}`
	}()
	if len(body) != 1400 {
		t.Fatalf("the body is %d bytes", len(body))
	}
	declared := func() io.Reader { return strings.NewReader(body) }
	chunked := func() io.Reader { return io.MultiReader(strings.NewReader(body)) }
	steps := []limitStep{
		{"within the burst", a, declared, 0, http.StatusOK, ""},
		{"the burst's rest", a, declared, 0, http.StatusOK, ""},              // 200 bytes left
		{"over it", a, declared, 0, http.StatusTooManyRequests, "2"},         // 1,200 bytes at 1,000/s
		{"over it, chunked", a, chunked, 0, http.StatusTooManyRequests, "2"}, // charged once read
		{"another principal has its own budget", b, chunked, 0, http.StatusOK, ""},
		{"not yet refilled", a, declared, time.Second, http.StatusTooManyRequests, "1"},
		{"refilled", a, declared, 200 * time.Millisecond, http.StatusOK, ""},
	}
	checkLimitSteps(t, admin, clk, steps, func(s limitStep) gqltest.Response {
		return s.c.Send(http.MethodPost, "/graphql", s.body(), map[string]string{"Content-Type": "application/json"})
	})
}

// TestRequestTimeout: a request's deadline reaches the store; one that
// has passed before the store is reached is TIMEOUT and begins no
// transaction.
func TestRequestTimeout(t *testing.T) {
	opts := membranehttp.DefaultHandlerOptions()
	opts.RequestTimeout = time.Nanosecond
	c := gqltest.NewOpts(t, opts)
	before := c.DB.TxCount()
	r := c.Post(map[string]any{"query": `{ records { nodes { id } } }`})
	if r.Code() != "TIMEOUT" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if n := c.DB.TxCount() - before; n != 0 {
		t.Fatalf("%d transactions ran", n)
	}
}

// TestDevAndProductionSurface: GraphiQL and introspection are on by
// default (development) and can each be turned off.
func TestDevAndProductionSurface(t *testing.T) {
	introspect := map[string]any{"query": `{ __schema { queryType { name } } }`}
	tests := []struct {
		name                    string
		graphiql, introspection bool
	}{
		{"development", true, true},
		{"production", false, false},
		{"production with introspection", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := membranehttp.DefaultHandlerOptions()
			opts.GraphiQL, opts.Introspection = tt.graphiql, tt.introspection
			c := gqltest.NewOpts(t, opts)
			page := c.Send(http.MethodGet, "/", nil, nil)
			if got := page.Status == http.StatusOK && bytes.Contains(bytes.ToLower(page.Body), []byte("graphiql")); got != tt.graphiql {
				t.Fatalf("GraphiQL served = %v (status %d)", got, page.Status)
			}
			// GraphiQL is at "/" only; any other unknown path is 404.
			if other := c.Send(http.MethodGet, "/metricz", nil, nil); other.Status != http.StatusNotFound {
				t.Fatalf("GET /metricz: status %d, want 404", other.Status)
			}
			r := c.Post(introspect)
			if got := r.Code() == "" && strings.Contains(string(r.Data), `"Query"`); got != tt.introspection {
				t.Fatalf("introspection answered = %v: %s", got, r.Body)
			}
			if !tt.introspection && (r.Code() != "FORBIDDEN" || r.Status != http.StatusUnprocessableEntity) {
				t.Fatalf("refused introspection with %d %s", r.Status, r.Body)
			}
			typename := c.Post(map[string]any{"query": `{ __typename }`})
			if typename.Code() != "" {
				t.Fatalf("__typename refused: %s", typename.Body)
			}
		})
	}
}

// TestCORS: preflights from allowed origins are answered with the allowed
// methods and headers; other origins get no CORS headers, and their
// preflights are 403.
func TestCORS(t *testing.T) {
	opts := membranehttp.DefaultHandlerOptions()
	opts.CORS = membranehttp.CORSOptions{AllowedOrigins: []string{"https://app.example"}, AllowCredentials: true, MaxAge: 10 * time.Minute}
	c := gqltest.NewOpts(t, opts)
	preflight := func(origin string) gqltest.Response {
		return c.Send(http.MethodOptions, "/graphql", nil, map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, x-membrane-scopes"})
	}

	t.Run("preflight from an allowed origin", func(t *testing.T) {
		r := preflight("https://app.example")
		h := r.Header
		if r.Status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
			h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Max-Age") != "600" {
			t.Fatalf("%d %v", r.Status, h)
		}
		for _, want := range []string{"Authorization", "Content-Type", membranehttp.HeaderMaxSensitivity, membranehttp.HeaderScopes} {
			if !strings.Contains(h.Get("Access-Control-Allow-Headers"), want) {
				t.Fatalf("allowed headers %q lack %s", h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		if !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("allowed methods %q", h.Get("Access-Control-Allow-Methods"))
		}
	})
	t.Run("preflight from another origin", func(t *testing.T) {
		r := preflight("https://evil.example")
		if r.Status != http.StatusForbidden || r.Code() != "FORBIDDEN" || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%d %v %s", r.Status, r.Header, r.Body)
		}
	})
	t.Run("request from an allowed origin", func(t *testing.T) {
		r := c.Send(http.MethodPost, "/graphql", strings.NewReader(`{"query": "{ records(first: 0) { nodes { id } } }"}`),
			map[string]string{"Origin": "https://app.example", "Content-Type": "application/json"})
		if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Fatalf("%d %v", r.Status, r.Header)
		}
	})
	t.Run("request from another origin", func(t *testing.T) {
		r := c.Send(http.MethodPost, "/graphql", strings.NewReader(`{"query": "{ records(first: 0) { nodes { id } } }"}`),
			map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json"})
		if r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%v", r.Header)
		}
	})
	t.Run("off by default", func(t *testing.T) {
		d := gqltest.New(t)
		r := d.Send(http.MethodOptions, "/graphql", nil, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
		if r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%v", r.Header)
		}
	})
}

// TestUndecodableBody: a body that is not a GraphQL request in JSON is
// BAD_USER_INPUT with HTTP 400, and the error does not quote it back.
func TestUndecodableBody(t *testing.T) {
	c := gqltest.New(t)
	for _, body := range []string{`{`, `{"query": 5, "secret": "quoted-back"}`, `[1, 2]`} {
		t.Run(body, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, c.URL+"/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+c.Key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var out gqltest.Response
			_ = json.Unmarshal(raw, &out)
			if resp.StatusCode != http.StatusBadRequest || len(out.Errors) != 1 || out.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
				t.Fatalf("status %d body %s, want 400 BAD_USER_INPUT", resp.StatusCode, raw)
			}
			if strings.Contains(string(raw), "quoted-back") {
				t.Fatalf("the error quotes the body: %s", raw)
			}
		})
	}
}

// limitedServer starts a server with the options edit sets, on a clock of
// the test's own, authenticating an admin and two writers; it returns the
// admin's client, the writers' and the clock.
func limitedServer(t *testing.T, edit func(*membranehttp.HandlerOptions)) (admin, a, b *client, clk *gqltest.Clock) {
	t.Helper()
	writer := func() membrane.Principal {
		return membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter,
			MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"nothing"}}
	}
	w1, w2 := writer(), writer()
	clk = gqltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts := membranehttp.DefaultHandlerOptions()
	edit(&opts)
	opts.Now = clk.Now
	admin = gqltest.NewOpts(t, opts, w1, w2)
	return admin, admin.As(w1.Actor), admin.As(w2.Actor), clk
}

// limitStep is one request of a limit's sequence: sent by c (with body,
// when the test sends bodies of its own) after the clock moved by advance.
type limitStep struct {
	name       string
	c          *client
	body       func() io.Reader
	advance    time.Duration
	wantStatus int
	wantRetry  string
}

// checkLimitSteps sends the steps in order: each must get its status and
// Retry-After, and one refused (429) must be RATE_LIMITED and run no
// transaction.
func checkLimitSteps(t *testing.T, admin *client, clk *gqltest.Clock, steps []limitStep, send func(limitStep) gqltest.Response) {
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clk.Add(s.advance)
			before := admin.DB.TxCount()
			r := send(s)
			if r.Status != s.wantStatus {
				t.Fatalf("status = %d: %s", r.Status, r.Body)
			}
			if got := r.Header.Get("Retry-After"); got != s.wantRetry {
				t.Fatalf("Retry-After = %q, want %q", got, s.wantRetry)
			}
			if s.wantStatus == http.StatusTooManyRequests {
				if r.Code() != "RATE_LIMITED" {
					t.Fatalf("code = %q", r.Code())
				}
				if n := admin.DB.TxCount() - before; n != 0 {
					t.Fatalf("%d transactions ran", n)
				}
			}
		})
	}
}

// TestSlowBodyIsCut (issue 15): a client that sends its headers and then
// trickles its body is answered 408 TIMEOUT once the read timeout has
// passed, long before it would have finished, and its connection is
// closed; before, the server read for as long as the client kept sending.
func TestSlowBodyIsCut(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	opts := membranehttp.DefaultHandlerOptions()
	opts.ReadTimeout = readTimeout
	c := gqltest.NewOpts(t, opts)
	// The same handler served as internal/app serves it: observed, through
	// the recorder that wraps every response writer.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := gqltest.NewWiring(c.DB, log)
	w.Stores = membrane.Stores{Records: c.DB}
	r := w.Resolver()
	observed := httptest.NewServer(membranehttp.Observe(membranehttp.NewHandler(r, c.DB, membrane.NewKeyring(c.Ring), log, opts), membranehttp.Observability{Log: log}))
	t.Cleanup(observed.Close)
	body := `{"query": "{ __typename }"}` + strings.Repeat(" ", 40)
	length := fmt.Sprintf("Content-Length: %d\r\n", len(body))
	oneByte := func(b byte) string { return string(b) }
	tests := []struct {
		name, url, key string
		headers        string
		// chunk frames one byte of the body as the transfer encoding
		// wants it.
		chunk func(b byte) string
		// status and code answer the request.
		status int
		code   string
	}{
		{"announced length", c.URL, c.Key, length, oneByte, http.StatusRequestTimeout, "TIMEOUT"},
		{"chunked", c.URL, c.Key, "Transfer-Encoding: chunked\r\n", func(b byte) string { return fmt.Sprintf("1\r\n%c\r\n", b) },
			http.StatusRequestTimeout, "TIMEOUT"},
		{"observed", observed.URL, c.Key, length, oneByte, http.StatusRequestTimeout, "TIMEOUT"},
		// Answered before its body is read, the rest of which net/http
		// would read afterwards, to reuse the connection.
		{"refused before the body is read", c.URL, "wrong", length, oneByte, http.StatusUnauthorized, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(tt.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Generous protocol bound: the client would take 6.7 s to
			// send the whole body.
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: membrane\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n%s\r\n",
				tt.key, tt.headers); err != nil {
				t.Fatal(err)
			}
			answered := make(chan struct{})
			sent := make(chan int, 1)
			go func() { // one byte every 100 ms until answered
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				n := 0
				defer func() { sent <- n }()
				for ; n < len(body); n++ {
					select {
					case <-answered:
						return
					case <-tick.C:
					}
					if _, err := io.WriteString(conn, tt.chunk(body[n])); err != nil {
						return
					}
				}
				if strings.Contains(tt.headers, "chunked") {
					_, _ = io.WriteString(conn, "0\r\n\r\n")
				}
			}()
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				close(answered)
				t.Fatalf("no response: %v", err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out gqltest.Response
			if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != tt.status ||
				len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != tt.code {
				t.Fatalf("status %d body %s, want %d %s", resp.StatusCode, raw, tt.status, tt.code)
			}
			// The server closes the connection (EOF, or a reset when the
			// client's next byte met the closed socket) before the client
			// has sent its whole body.
			var ne net.Error
			if _, err := br.ReadByte(); err == nil || (errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("connection still open after the answer: %v", err)
			}
			close(answered)
			if n := <-sent; n >= len(body) {
				t.Fatalf("the whole body (%d bytes) was read before the connection closed", n)
			}
		})
	}
}

// TestReadTimeoutSparesLongRequests: the read timeout bounds the body
// alone: an SSE subscription stays open and delivers long after it (the
// deadline is cleared once the body is read; a WebSocket upgrade has no
// body and never gets one), and the client's kept-alive connection serves
// the writes in between.
func TestReadTimeoutSparesLongRequests(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	setup, _ := gqltest.WithFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.ReadTimeout = readTimeout
	c := gqltest.NewFull(t, setup, opts)
	scope := neo4jtest.Scope(t)
	s := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, map[string]any{"after": c.ChangeCursor(), "f": map[string]any{"scopes": []any{scope}}})
	for i := range 2 {
		// The scenario, not synchronisation: the stream stays idle for
		// longer than the read timeout.
		<-time.After(3 * readTimeout)
		id := c.Create(scope, "SEMANTIC", gqltest.Fact(fmt.Sprint("r", i)), nil)
		if e := gqltest.DecodeChange(t, s.Next()); e.RecordID != id {
			t.Fatalf("event for %s, want %s", e.RecordID, id)
		}
	}
}

// TestCORSLoopbackInDevMode: with no API keys (development mode) a page
// on http://localhost or http://127.0.0.1, any port, may call the API and
// open a subscription socket; with keys only the configured origins may.
// Neither answer needs the database: preflights and sockets are refused or
// accepted before a resolver runs.
func TestCORSLoopbackInDevMode(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	serve := func(keys *membrane.Keyring) string {
		opts := membranehttp.DefaultHandlerOptions()
		opts.CORS.AllowedOrigins = []string{"https://dash.example"}
		srv := httptest.NewServer(membranehttp.NewHandler(&graph.Resolver{}, panicPinger{}, keys, log, opts))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	k, err := membrane.NewAPIKey(membrane.HashKey("key-"+membrane.NewID()), membrane.Principal{Actor: "a", Role: membrane.RoleAdmin,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}})
	if err != nil {
		t.Fatal(err)
	}
	dev, prod := serve(membrane.NewKeyring(nil)), serve(membrane.NewKeyring([]membrane.APIKey{k}))
	for _, tc := range []struct {
		origin    string
		dev, prod bool
		// malformed: no browser sends it; the WebSocket library matches
		// only scheme and host (case-insensitively), so only CORS is
		// checked.
		malformed bool
	}{
		{"http://localhost:3000", true, false, false},
		{"http://localhost:5173", true, false, false},
		{"http://localhost", true, false, false},
		{"http://127.0.0.1:8080", true, false, false},
		{"http://LOCALHOST:3000", false, false, true}, // browsers send the host in lower case
		{"https://localhost:3000", false, false, false},
		{"http://localhost.evil.example:3000", false, false, false},
		{"http://127.0.0.1.nip.io", false, false, false},
		{"http://localhost:3000/path", false, false, true},
		{"http://user@localhost:3000", false, false, true},
		{"http://localhost:99999", false, false, true},
		{"http://[::1]:3000", false, false, false},
		{"null", false, false, true},
		{"https://dash.example", true, true, false}, // the configured list holds in both modes
		{"https://evil.example", false, false, false},
	} {
		for _, srv := range []struct {
			name, url string
			want      bool
		}{{"dev", dev, tc.dev}, {"production", prod, tc.prod}} {
			t.Run(srv.name+" "+tc.origin, func(t *testing.T) {
				req, _ := http.NewRequest(http.MethodOptions, srv.url+"/graphql", nil)
				req.Header.Set("Origin", tc.origin)
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := resp.StatusCode == http.StatusNoContent && resp.Header.Get("Access-Control-Allow-Origin") == tc.origin
				if got != srv.want || !got && resp.StatusCode != http.StatusForbidden {
					t.Fatalf("preflight: %d %v, want allowed=%v", resp.StatusCode, resp.Header, srv.want)
				}
				if tc.malformed {
					return
				}
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.url, "http")+"/graphql", &websocket.DialOptions{
					HTTPHeader: http.Header{"Origin": {tc.origin}}, Subprotocols: []string{"graphql-transport-ws"}})
				if err == nil {
					conn.CloseNow()
				}
				if (err == nil) != srv.want {
					t.Fatalf("WebSocket from %s: %v, want accepted=%v", tc.origin, err, srv.want)
				}
			})
		}
	}
}
