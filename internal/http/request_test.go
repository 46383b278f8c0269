package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
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
