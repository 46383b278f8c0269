package graph

import (
	"math"
	"net/http"
	"strconv"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/ratelimit"
)

// RateLimit is a principal's rate of requests per second and its burst.
type RateLimit = ratelimit.Limit

// rateLimit lets each principal, identified by its actor, make requests at
// the rate of its role; over it a request is 429 RATE_LIMITED with
// Retry-After. It runs after authenticate: the actor, not the client's
// address, is who pays, so one principal cannot escape its limit by
// connecting from several addresses, nor starve others behind one proxy.
func rateLimit(l *ratelimit.Limiter, limits map[membrane.Role]RateLimit, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if deferred, _ := r.Context().Value(deferredAuthKey{}).(bool); deferred {
			// A WebSocket that authenticates in connection_init has no
			// principal yet; charging it to "anonymous" would make every
			// such socket share one bucket.
			next.ServeHTTP(w, r)
			return
		}
		p := membrane.TrustFromContext(r.Context()).Principal
		if ok, wait := l.Allow(p.Actor, limits[p.Role]); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait.Seconds())))
			writeError(w, http.StatusTooManyRequests, membrane.ERATELIMITED, "too many requests: retry after the time in the Retry-After header")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// retryAfterSeconds rounds a wait up to whole seconds, at least 1, as
// Retry-After takes them.
func retryAfterSeconds(s float64) int { return max(1, int(math.Ceil(s))) }
