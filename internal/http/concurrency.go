package http

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// principalSlots bounds the requests each principal (by actor) has in
// progress on this server: a principal's requests beyond it wait their
// turn, so that one principal sending expensive requests in parallel (huge
// bodies, retrieveGraph at its bounds) takes at most that many of the
// server's cores, and the requests of every other principal still find
// some. A request that waits longer than wait is refused with 429
// RATE_LIMITED rather than queued for ever.
type principalSlots struct {
	n    int
	wait time.Duration
	// heavy are the server's slots for heavy requests (one "principal").
	heavy *principalSlots

	mu    sync.Mutex
	slots map[string]*slotsOf
}

// slotsOf is one principal's slots and how many requests use or wait for
// them (its entry is dropped when that reaches 0).
type slotsOf struct {
	sem   chan struct{}
	users int
}

// HeavyBody is the body size from which a request is heavy: decoding a
// JSON body costs about 7 ms of CPU per MiB, so the server runs at most
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

// newPrincipalSlots returns slots of n requests per principal; nil (no
// bound) when n <= 0.
func newPrincipalSlots(n int, wait time.Duration) *principalSlots {
	if n <= 0 {
		return nil
	}
	return &principalSlots{n: n, wait: wait, slots: map[string]*slotsOf{},
		heavy: &principalSlots{n: HeavySlots, wait: wait, slots: map[string]*slotsOf{}}}
}

// acquire waits for one of actor's slots until ctx ends or the wait is
// over; release gives it back. ok is false when no slot came free.
func (ps *principalSlots) acquire(ctx context.Context, actor string) (release func(), ok bool) {
	ps.mu.Lock()
	s := ps.slots[actor]
	if s == nil {
		s = &slotsOf{sem: make(chan struct{}, ps.n)}
		ps.slots[actor] = s
	}
	s.users++
	ps.mu.Unlock()
	done := func() {
		ps.mu.Lock()
		if s.users--; s.users == 0 {
			delete(ps.slots, actor)
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

// limitConcurrency holds each request to its principal's slots (ps nil:
// no bound). Long-lived requests (longLived: WebSocket upgrades, SSE
// streams) take no slot: they wait for events, and the subscription limits
// bound them. It runs before the body is read, so a waiting request holds
// no body.
func limitConcurrency(ps *principalSlots, longLived func(*http.Request) bool, writeErr errorWriter, next http.Handler) http.Handler {
	if ps == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if longLived(r) {
			next.ServeHTTP(w, r)
			return
		}
		refuse := func() {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(ps.wait.Seconds())))
			writeErr(w, r, http.StatusTooManyRequests, membrane.ERATELIMITED,
				"too many requests of this principal in progress: retry after the time in the Retry-After header")
		}
		release, ok := ps.acquire(r.Context(), membrane.TrustFromContext(r.Context()).Principal.Actor)
		if !ok {
			refuse()
			return
		}
		defer release()
		if heavy(r) {
			// Besides its principal's slot, a large body takes one of the
			// server's few slots for large bodies, whoever sends it.
			releaseHeavy, ok := ps.heavy.acquire(r.Context(), "")
			if !ok {
				refuse()
				return
			}
			defer releaseHeavy()
		}
		next.ServeHTTP(w, r)
	})
}

// graphQLStream reports a GraphQL request that streams: a WebSocket upgrade
// or an SSE subscription (sseTransport).
func graphQLStream(r *http.Request) bool {
	return isWebsocketUpgrade(r) || sseTransport{}.Supports(r)
}

// mcpStream reports an MCP request that streams: a GET, the server-to-client
// event stream of the streamable HTTP transport.
func mcpStream(r *http.Request) bool { return r.Method == http.MethodGet }
