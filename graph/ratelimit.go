package graph

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

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
// rate a request is 429 RATE_LIMITED with Retry-After. A WebSocket that
// authenticates in connection_init has no principal yet: it is charged
// there (authenticateInit).
func rateLimit(pl *principalLimits, next http.Handler) http.Handler {
	if pl == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebsocketUpgrade(r) {
			// One request, many operations: each is charged as it starts
			// (operationRateLimit).
			r = r.WithContext(context.WithValue(r.Context(), perOperationKey{}, true))
		}
		if deferred, _ := r.Context().Value(deferredAuthKey{}).(bool); deferred {
			next.ServeHTTP(w, r)
			return
		}
		if ok, wait := pl.allow(membrane.TrustFromContext(r.Context()).Principal); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(wait))
			writeError(w, http.StatusTooManyRequests, membrane.ERATELIMITED, "too many requests: retry after the time in the Retry-After header")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// perOperationKey marks, in a WebSocket's context, that its operations are
// charged one by one.
type perOperationKey struct{}

// operationRateLimit charges every operation started over a WebSocket (each
// subscribe message) to its principal's bucket, as an HTTP request is
// charged, before it is even parsed: a socket is otherwise a way around the
// rate limit (issue 15: 2,000 queries over one socket against 50/s). Over
// the limit the operation gets a RATE_LIMITED error, with retryAfter in its
// extensions, and the socket stays open. An SSE stream is one HTTP request,
// charged by rateLimit.
type operationRateLimit struct{ limits *principalLimits }

var _ graphql.OperationParameterMutator = operationRateLimit{}

// ExtensionName implements graphql.HandlerExtension.
func (operationRateLimit) ExtensionName() string { return "OperationRateLimit" }

// Validate implements graphql.HandlerExtension.
func (operationRateLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters charges the operation when it came over a
// WebSocket.
func (o operationRateLimit) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	if on, _ := ctx.Value(perOperationKey{}).(bool); !on {
		return nil
	}
	ok, wait := o.limits.allow(membrane.TrustFromContext(ctx).Principal)
	if ok {
		return nil
	}
	return &gqlerror.Error{Message: fmt.Sprintf("too many requests: retry after %d s", wait),
		Extensions: map[string]any{"code": membrane.ERATELIMITED, "retryAfter": wait}}
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After takes them.
func retryAfterSeconds(s float64) int { return max(1, int(math.Ceil(s))) }
