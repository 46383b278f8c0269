package http

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
)

// principalSlots bound the work in progress of each key (a principal's
// actor): a key's work beyond n waits its turn, and is refused (429 or a
// RATE_LIMITED error) when no slot comes free within wait.
type principalSlots struct {
	n    int
	wait time.Duration

	mu    sync.Mutex
	slots map[string]*slotsOf
}

// slotsOf is one key's slots and how many requests use or wait for them
// (its entry is dropped when that reaches 0).
type slotsOf struct {
	sem   chan struct{}
	users int
}

// newPrincipalSlots returns slots of n per key; nil (no bound) when n <= 0.
func newPrincipalSlots(n int, wait time.Duration) *principalSlots {
	if n <= 0 {
		return nil
	}
	return &principalSlots{n: n, wait: wait, slots: map[string]*slotsOf{}}
}

// acquire waits for one of key's slots until ctx ends or the wait is over;
// release gives it back. ok is false when no slot came free.
func (ps *principalSlots) acquire(ctx context.Context, key string) (release func(), ok bool) {
	ps.mu.Lock()
	s := ps.slots[key]
	if s == nil {
		s = &slotsOf{sem: make(chan struct{}, ps.n)}
		ps.slots[key] = s
	}
	s.users++
	ps.mu.Unlock()
	done := func() {
		ps.mu.Lock()
		if s.users--; s.users == 0 {
			delete(ps.slots, key)
		}
		ps.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem; done() }, true
	default:
	}
	t := time.NewTimer(ps.wait)
	defer t.Stop()
	select {
	case s.sem <- struct{}{}:
		return func() { <-s.sem; done() }, true
	case <-t.C:
	case <-ctx.Done():
	}
	done()
	return nil, false
}

// HeavyBody is the body size from which a request is heavy: decoding a
// JSON body costs about 7 ms of CPU per MiB, so the server decodes at most
// HeavySlots of them at once, whoever sends them, and a few large writes
// cannot take every core from everyone's small requests. A body of unknown
// length (chunked) counts as heavy.
const (
	HeavyBody  = 1 << 20
	HeavySlots = 1
)

// heavy reports a request whose body is large, or of unknown length.
func heavy(r *http.Request) bool {
	return r.ContentLength > HeavyBody || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

// limitHeavyBodies holds each heavy request to the server's slots for them
// (one key, ""), before its body is read, so that a waiting request holds
// no body; a request that waits longer than the slots' wait is 429
// RATE_LIMITED.
func limitHeavyBodies(ps *principalSlots, writeErr errorWriter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !heavy(r) {
			next.ServeHTTP(w, r)
			return
		}
		release, ok := ps.acquire(r.Context(), "")
		if !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(ps.wait.Seconds())))
			writeErr(w, r, http.StatusTooManyRequests, membrane.ERATELIMITED,
				"too many large requests in progress: retry after the time in the Retry-After header")
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// CostlyOperation is the cost (graph/complexity.go) from which a query or
// mutation is costly: retrieveGraph near its bounds, records pages of
// hundreds with their relations. A principal runs at most
// limits.concurrency costly operations at once (costlyOperations).
const CostlyOperation = 5_000

// costlyOperations holds each principal's costly operations to its slots
// (ps nil: no bound), so that one principal sending expensive operations in
// parallel takes at most that many cores, and every other principal's
// requests still find some; its cheap operations are not held. An operation
// that waits longer than the slots' wait gets RATE_LIMITED, with
// retryAfter. Subscriptions are not held: they wait for events.
func costlyOperations(ps *principalSlots) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if ps == nil || !graphql.HasOperationContext(ctx) {
			return next(ctx)
		}
		op := graphql.GetOperationContext(ctx).Operation
		s := extension.GetComplexityStats(ctx)
		if op == nil || op.Operation == ast.Subscription || s == nil || s.Complexity < CostlyOperation {
			return next(ctx)
		}
		release, ok := ps.acquire(ctx, membrane.TrustFromContext(ctx).Principal.Actor)
		if !ok {
			wait := retryAfterSeconds(ps.wait.Seconds())
			return &graphql.Response{Errors: gqlerror.List{{
				Message:    fmt.Sprintf("too many costly operations of this principal in progress: retry after %d s", wait),
				Extensions: map[string]any{"code": graph.Code(membrane.ERATELIMITED), "retryAfter": wait}}}}
		}
		defer release()
		return next(ctx)
	}
}
