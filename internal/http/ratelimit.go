package http

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/ratelimit"
)

// RateLimit is a principal's rate of requests per second and its burst.
type RateLimit = ratelimit.Limit

// principalLimits charges each principal, identified by its actor, at the
// rate of its role: the actor, not the client's address, is who pays, so
// one principal cannot escape its limit by connecting from several
// addresses, nor starve others behind one proxy.
type principalLimits struct {
	l      *ratelimit.Limiter
	limits map[membrane.Role]RateLimit
}

// newPrincipalLimits returns o's rate limits; nil when it sets none.
func newPrincipalLimits(o HandlerOptions) *principalLimits {
	if len(o.RateLimits) == 0 {
		return nil
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	actors := o.RateLimitActors
	if actors <= 0 {
		actors = DefaultRateLimitActors
	}
	return &principalLimits{l: ratelimit.New(actors, now), limits: o.RateLimits}
}

// allow charges one request to p. Refused, it returns the whole seconds to
// wait, for Retry-After. A nil principalLimits allows everything.
func (pl *principalLimits) allow(p membrane.Principal) (bool, int) {
	if pl == nil {
		return true, 0
	}
	ok, wait := pl.l.Allow(p.Actor, pl.limits[p.Role])
	return ok, retryAfterSeconds(wait.Seconds())
}

// rateLimit charges every authenticated request; over its principal's
// rate a request is 429 RATE_LIMITED with Retry-After, answered with
// writeErr. A WebSocket that authenticates in connection_init has no
// principal yet: it is charged there (authenticateInit).
func rateLimit(pl *principalLimits, writeErr errorWriter, next http.Handler) http.Handler {
	if pl == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebsocketUpgrade(r) {
			// One request, many operations: each is charged as it starts
			// (operationRateLimit).
			r = r.WithContext(context.WithValue(r.Context(), perOperationKey{}, &socketCharges{}))
		}
		if deferred, _ := r.Context().Value(deferredAuthKey{}).(bool); deferred {
			next.ServeHTTP(w, r)
			return
		}
		if ok, wait := pl.allow(membrane.TrustFromContext(r.Context()).Principal); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(wait))
			writeErr(w, r, http.StatusTooManyRequests, membrane.ERATELIMITED, "too many requests: retry after the time in the Retry-After header")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// perOperationKey marks, in a WebSocket's context, that its operations are
// charged one by one; its value is the socket's *socketCharges.
type perOperationKey struct{}

// maxRefusedInARow is how many operations in a row a socket may have
// refused for its rate before the server closes it with 4429: a refusal is
// cheap, but a client that ignores retryAfter and floods the socket would
// otherwise make the server parse and answer thousands of operations a
// second (issue 15's soak: 1.1 million in 5 minutes). Reconnecting costs
// an upgrade, which is charged like any request.
const maxRefusedInARow = 100

// socketCharges is what one WebSocket's operations owe: the refusals in a
// row since its last accepted operation.
type socketCharges struct{ refusedInARow atomic.Int64 }

// abusive reports whether the socket's client keeps sending operations
// that are refused for its rate.
func (s *socketCharges) abusive() bool {
	return s != nil && s.refusedInARow.Load() >= maxRefusedInARow
}

// operationRateLimit charges every operation started over a WebSocket (each
// subscribe message) to its principal's bucket, as an HTTP request is
// charged, before it is even parsed: a socket is otherwise a way around the
// rate limit (issue 15: 2,000 queries over one socket against 50/s). Over
// the limit the operation gets a RATE_LIMITED error, with retryAfter in its
// extensions, and the socket stays open, unless the client goes on sending
// operations regardless (maxRefusedInARow; protocolConn closes it). An SSE
// stream is one HTTP request, charged by rateLimit.
type operationRateLimit struct{ limits *principalLimits }

var _ graphql.OperationParameterMutator = operationRateLimit{}

// ExtensionName implements graphql.HandlerExtension.
func (operationRateLimit) ExtensionName() string { return "OperationRateLimit" }

// Validate implements graphql.HandlerExtension.
func (operationRateLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters charges the operation when it came over a
// WebSocket.
func (o operationRateLimit) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	charges, _ := ctx.Value(perOperationKey{}).(*socketCharges)
	if charges == nil {
		return nil
	}
	ok, wait := o.limits.allow(membrane.TrustFromContext(ctx).Principal)
	if ok {
		charges.refusedInARow.Store(0)
		return nil
	}
	charges.refusedInARow.Add(1)
	return &gqlerror.Error{Message: fmt.Sprintf("too many requests: retry after %d s", wait),
		Extensions: map[string]any{"code": graph.Code(membrane.ERATELIMITED), "retryAfter": wait}}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After takes them.
func retryAfterSeconds(s float64) int { return max(1, int(math.Ceil(s))) }
