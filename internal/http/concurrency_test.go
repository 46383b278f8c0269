package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
)

// held is a handler whose requests say they started and then wait until
// released.
type held struct {
	started chan string
	release chan struct{}
}

func newHeld() *held { return &held{started: make(chan string, 16), release: make(chan struct{})} }

func (h *held) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.started <- r.Header.Get("X-Name")
	<-h.release
	w.WriteHeader(http.StatusOK)
}

type answer struct {
	status int
	code   string
}

// sendBody posts a body of size bytes, named by X-Name.
func sendBody(srv *httptest.Server, name string, size int) <-chan answer {
	out := make(chan answer, 1)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(make([]byte, size)))
	req.Header.Set("X-Name", name)
	go func() {
		resp, err := srv.Client().Do(req)
		if err != nil {
			out <- answer{status: -1, code: err.Error()}
			return
		}
		defer resp.Body.Close()
		var body struct {
			Errors []struct {
				Extensions struct{ Code string }
			}
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		a := answer{status: resp.StatusCode}
		if len(body.Errors) > 0 {
			a.code = body.Errors[0].Extensions.Code
		}
		out <- a
	}()
	return out
}

// TestHeavyBodiesShareTheServersSlot: requests with large bodies take the
// server's one slot for them, whoever sends them: a second large request
// waits for the first (refused, 429 RATE_LIMITED, when its wait is over),
// while small requests go through at once.
func TestHeavyBodiesShareTheServersSlot(t *testing.T) {
	h := newHeld()
	srv := httptest.NewServer(membranehttp.LimitHeavyBodies(50*time.Millisecond, h))
	t.Cleanup(srv.Close)
	big := membranehttp.HeavyBody + 1
	first := sendBody(srv, "first large", big)
	gqltest.Await(t, h.started, "the first large request")
	small := sendBody(srv, "small", 100)
	if got := gqltest.Await(t, h.started, "a small request beside it"); got != "small" {
		t.Fatalf("started %q, want the small request", got)
	}
	if got := gqltest.Await(t, sendBody(srv, "second large", big), "the second large request"); got.status != http.StatusTooManyRequests || got.code != "RATE_LIMITED" {
		t.Fatalf("a second large request beside the first: %+v, want 429 RATE_LIMITED once its wait was over", got)
	}
	close(h.release)
	for _, ch := range []<-chan answer{first, small} {
		if got := gqltest.Await(t, ch, "a held request"); got.status != http.StatusOK {
			t.Fatalf("held request: %+v", got)
		}
	}
}

// operation returns the context of a query (or subscription) of cost by
// actor, as gqlgen gives it to response middleware.
func operation(actor string, op ast.Operation, cost int) context.Context {
	oc := &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: op}}
	oc.Stats.SetExtension("ComplexityLimit", &extension.ComplexityStats{Complexity: cost, ComplexityLimit: 1_000_000})
	ctx := membrane.NewContextWithTrust(context.Background(), membrane.Trust{Principal: membrane.Principal{Actor: actor, Role: membrane.RoleReader}})
	return graphql.WithOperationContext(ctx, oc)
}

// TestCostlyOperations: a principal's costly operations beyond its slots
// wait and, when none comes free in time, get RATE_LIMITED with
// retryAfter; its cheap operations, its subscriptions and another
// principal's costly operations run at once; a waiting operation runs as
// soon as a slot is released.
func TestCostlyOperations(t *testing.T) {
	mw := membranehttp.CostlyOperations(1, 50*time.Millisecond)
	started := make(chan string, 8)
	release := make(chan struct{})
	run := func(name string, ctx context.Context) <-chan *graphql.Response {
		out := make(chan *graphql.Response, 1)
		go func() {
			out <- mw(ctx, func(context.Context) *graphql.Response {
				started <- name
				<-release
				return &graphql.Response{}
			})
		}()
		return out
	}
	costly := membranehttp.CostlyOperation
	a1 := run("a costly", operation("a", ast.Query, costly))
	gqltest.Await(t, started, "a's costly operation")
	var others []<-chan *graphql.Response
	for _, o := range []struct {
		name string
		ctx  context.Context
	}{
		{"a cheap", operation("a", ast.Query, costly-1)},
		{"a subscription", operation("a", ast.Subscription, 10*costly)},
		{"b costly", operation("b", ast.Mutation, costly)},
	} {
		others = append(others, run(o.name, o.ctx))
		if got := gqltest.Await(t, started, o.name); got != o.name {
			t.Fatalf("started %q, want %q beside a's costly operation", got, o.name)
		}
	}
	refused := gqltest.Await(t, run("a second costly", operation("a", ast.Query, costly)), "a's second costly operation")
	if len(refused.Errors) != 1 || refused.Errors[0].Extensions["code"] != "RATE_LIMITED" || refused.Errors[0].Extensions["retryAfter"] == nil {
		t.Fatalf("a's second costly operation beside its first: %+v, want RATE_LIMITED with retryAfter", refused)
	}
	close(release)
	for _, ch := range append(others, a1) {
		if r := gqltest.Await(t, ch, "a held operation"); len(r.Errors) != 0 {
			t.Fatalf("held operation: %+v", r.Errors)
		}
	}

	// Waiting, an operation runs once the slot is free.
	mw = membranehttp.CostlyOperations(1, time.Minute)
	release = make(chan struct{})
	first := run("first", operation("c", ast.Query, costly))
	gqltest.Await(t, started, "the first")
	second := run("second", operation("c", ast.Query, costly))
	release <- struct{}{}
	gqltest.Await(t, first, "the first, done")
	if got := gqltest.Await(t, started, "the second, once the slot was free"); got != "second" {
		t.Fatalf("started %q", got)
	}
	release <- struct{}{}
	if r := gqltest.Await(t, second, "the second, done"); len(r.Errors) != 0 {
		t.Fatalf("second: %+v", r.Errors)
	}
}
