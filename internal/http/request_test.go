package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
)

// TestRateLimit: each principal has its role's token bucket, keyed by its
// actor; over it, a request is 429 RATE_LIMITED with Retry-After (whole
// seconds, rounded up) and runs nothing.
func TestRateLimit(t *testing.T) {
	writer := func() membrane.Principal {
		return membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter,
			MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"nothing"}}
	}
	w1, w2 := writer(), writer()
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := membranehttp.DefaultHandlerOptions()
	opts.RateLimits = map[membrane.Role]membranehttp.RateLimit{membrane.RoleWriter: {Rate: 0.3, Burst: 2}}
	opts.Now = clk.Now
	admin := newClientOpts(t, opts, w1, w2)
	a, b := admin.as(w1.Actor), admin.as(w2.Actor)
	q := map[string]any{"query": `{ records(first: 0) { nodes { id } } }`}

	steps := []struct {
		name       string
		c          *client
		advance    time.Duration
		wantStatus int
		wantRetry  string
	}{
		{"first of the burst", a, 0, http.StatusOK, ""},
		{"second of the burst", a, 0, http.StatusOK, ""},
		{"over the burst", a, 0, http.StatusTooManyRequests, "4"}, // 1 / 0.3 = 3.33 s
		{"another principal has its own bucket", b, 0, http.StatusOK, ""},
		{"a role without a limit", admin, 0, http.StatusOK, ""},
		{"still waiting", a, 3 * time.Second, http.StatusTooManyRequests, "1"},
		{"refilled", a, 400 * time.Millisecond, http.StatusOK, ""},
		{"empty again", a, 0, http.StatusTooManyRequests, "4"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clk.Add(s.advance)
			before := admin.db.TxCount()
			r := s.c.post(q)
			if r.status != s.wantStatus {
				t.Fatalf("status = %d: %s", r.status, r.body)
			}
			if got := r.header.Get("Retry-After"); got != s.wantRetry {
				t.Fatalf("Retry-After = %q, want %q", got, s.wantRetry)
			}
			if s.wantStatus == http.StatusTooManyRequests {
				if r.code() != "RATE_LIMITED" {
					t.Fatalf("code = %q", r.code())
				}
				if n := admin.db.TxCount() - before; n != 0 {
					t.Fatalf("%d transactions ran", n)
				}
			}
		})
	}
}

// TestBodyLimit: a body over the limit is 413 PAYLOAD_TOO_LARGE whether or
// not its length was announced.
func TestBodyLimit(t *testing.T) {
	opts := membranehttp.DefaultHandlerOptions()
	opts.MaxBodyBytes = 1000
	c := newClientOpts(t, opts)
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
			r := c.send(http.MethodPost, "/graphql", tt.body, map[string]string{"Content-Type": "application/json"})
			if r.status != tt.status {
				t.Fatalf("status = %d: %s", r.status, r.body)
			}
			if tt.status == http.StatusRequestEntityTooLarge && r.code() != "PAYLOAD_TOO_LARGE" {
				t.Fatalf("code = %q", r.code())
			}
		})
	}
}

// TestBodyBudget: each principal's request body bytes are charged to a
// bucket of its own (BodyBytesPerSecond, in bursts of one largest body);
// a body over what it holds is 429 RATE_LIMITED with Retry-After and runs
// nothing, whether its length was declared or it came chunked.
func TestBodyBudget(t *testing.T) {
	writer := func() membrane.Principal {
		return membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter,
			MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"nothing"}}
	}
	w1, w2 := writer(), writer()
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := membranehttp.DefaultHandlerOptions()
	opts.BodyBytesPerSecond = 1000
	opts.MaxBodyBytes = 3000
	opts.Now = clk.Now
	admin := newClientOpts(t, opts, w1, w2)
	a, b := admin.as(w1.Actor), admin.as(w2.Actor)
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
	steps := []struct {
		name       string
		c          *client
		body       func() io.Reader
		advance    time.Duration
		wantStatus int
		wantRetry  string
	}{
		{"within the burst", a, declared, 0, http.StatusOK, ""},
		{"the burst's rest", a, declared, 0, http.StatusOK, ""},              // 200 bytes left
		{"over it", a, declared, 0, http.StatusTooManyRequests, "2"},         // 1,200 bytes at 1,000/s
		{"over it, chunked", a, chunked, 0, http.StatusTooManyRequests, "2"}, // charged once read
		{"another principal has its own budget", b, chunked, 0, http.StatusOK, ""},
		{"not yet refilled", a, declared, time.Second, http.StatusTooManyRequests, "1"},
		{"refilled", a, declared, 200 * time.Millisecond, http.StatusOK, ""},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			clk.Add(s.advance)
			before := admin.db.TxCount()
			r := s.c.send(http.MethodPost, "/graphql", s.body(), map[string]string{"Content-Type": "application/json"})
			if r.status != s.wantStatus {
				t.Fatalf("status = %d: %s", r.status, r.body)
			}
			if got := r.header.Get("Retry-After"); got != s.wantRetry {
				t.Fatalf("Retry-After = %q, want %q", got, s.wantRetry)
			}
			if s.wantStatus == http.StatusTooManyRequests {
				if r.code() != "RATE_LIMITED" {
					t.Fatalf("code = %q", r.code())
				}
				if n := admin.db.TxCount() - before; n != 0 {
					t.Fatalf("%d transactions ran", n)
				}
			}
		})
	}
}

// TestRequestTimeout: a request's deadline reaches the store; one that
// has passed before the store is reached is TIMEOUT and begins no
// transaction.
func TestRequestTimeout(t *testing.T) {
	opts := membranehttp.DefaultHandlerOptions()
	opts.RequestTimeout = time.Nanosecond
	c := newClientOpts(t, opts)
	before := c.db.TxCount()
	r := c.post(map[string]any{"query": `{ records { nodes { id } } }`})
	if r.code() != "TIMEOUT" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if n := c.db.TxCount() - before; n != 0 {
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
			c := newClientOpts(t, opts)
			page := c.send(http.MethodGet, "/", nil, nil)
			if got := page.status == http.StatusOK && bytes.Contains(bytes.ToLower(page.body), []byte("graphiql")); got != tt.graphiql {
				t.Fatalf("GraphiQL served = %v (status %d)", got, page.status)
			}
			// GraphiQL is at "/" only; any other unknown path is 404.
			if other := c.send(http.MethodGet, "/metricz", nil, nil); other.status != http.StatusNotFound {
				t.Fatalf("GET /metricz: status %d, want 404", other.status)
			}
			r := c.post(introspect)
			if got := r.code() == "" && strings.Contains(string(r.gql.Data), `"Query"`); got != tt.introspection {
				t.Fatalf("introspection answered = %v: %s", got, r.body)
			}
			if !tt.introspection && (r.code() != "FORBIDDEN" || r.status != http.StatusUnprocessableEntity) {
				t.Fatalf("refused introspection with %d %s", r.status, r.body)
			}
			typename := c.post(map[string]any{"query": `{ __typename }`})
			if typename.code() != "" {
				t.Fatalf("__typename refused: %s", typename.body)
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
	c := newClientOpts(t, opts)
	preflight := func(origin string) httpResult {
		return c.send(http.MethodOptions, "/graphql", nil, map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, x-membrane-scopes"})
	}

	t.Run("preflight from an allowed origin", func(t *testing.T) {
		r := preflight("https://app.example")
		h := r.header
		if r.status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
			h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Max-Age") != "600" {
			t.Fatalf("%d %v", r.status, h)
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
		if r.status != http.StatusForbidden || r.code() != "FORBIDDEN" || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%d %v %s", r.status, r.header, r.body)
		}
	})
	t.Run("request from an allowed origin", func(t *testing.T) {
		r := c.send(http.MethodPost, "/graphql", strings.NewReader(`{"query": "{ records(first: 0) { nodes { id } } }"}`),
			map[string]string{"Origin": "https://app.example", "Content-Type": "application/json"})
		if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Fatalf("%d %v", r.status, r.header)
		}
	})
	t.Run("request from another origin", func(t *testing.T) {
		r := c.send(http.MethodPost, "/graphql", strings.NewReader(`{"query": "{ records(first: 0) { nodes { id } } }"}`),
			map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json"})
		if r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%v", r.header)
		}
	})
	t.Run("off by default", func(t *testing.T) {
		d := newClient(t)
		r := d.send(http.MethodOptions, "/graphql", nil, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
		if r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%v", r.header)
		}
	})
}

// TestUndecodableBody: a body that is not a GraphQL request in JSON is
// BAD_USER_INPUT with HTTP 400, and the error does not quote it back.
func TestUndecodableBody(t *testing.T) {
	c := newClient(t)
	for _, body := range []string{`{`, `{"query": 5, "secret": "quoted-back"}`, `[1, 2]`} {
		t.Run(body, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, c.url+"/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+c.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var out gqlResponse
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
