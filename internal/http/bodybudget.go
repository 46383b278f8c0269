package http

import (
	"cmp"
	"net/http"
	"strconv"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/ratelimit"
)

// DefaultBodyBytesPerSecond is each principal's default budget of request
// body bytes: decoding JSON takes about 7 ms of a core per MiB, so a
// principal at this rate spends under 3 % of one, while one posting 9 MiB
// bodies as fast as the server takes them kept a core busy and slowed
// every other principal's reads fourfold (docs/BENCHMARKS.md, "Fairness").
const DefaultBodyBytesPerSecond = 4 << 20

// bodyBudget charges each principal (by actor) the bytes of its request
// bodies from a bucket of rate bytes a second holding up to a whole
// largest body, so that a principal may send a body of any allowed size
// now and then, but not keep the server decoding large ones.
type bodyBudget struct {
	l     *ratelimit.Limiter
	limit ratelimit.Limit
}

// newBodyBudget returns o's body budget; nil (no budget) when its rate is 0.
func newBodyBudget(o HandlerOptions) *bodyBudget {
	if o.BodyBytesPerSecond <= 0 {
		return nil
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &bodyBudget{l: ratelimit.New(cmp.Or(o.RateLimitActors, DefaultRateLimitActors), now),
		limit: ratelimit.Limit{Rate: float64(o.BodyBytesPerSecond), Burst: int(o.bodyLimit())}}
}

// chargeBody charges a request's body to its principal's budget before it
// is read, when its length is declared, and once read when it is not (a
// chunked body: limitBody, which runs in between, has then read it whole
// and set its length). Over budget the request is 429 RATE_LIMITED with
// Retry-After, answered with writeErr, before anything decodes the body.
// declared says which of the two places this is.
func chargeBody(bb *bodyBudget, declared bool, writeErr errorWriter, next http.Handler) http.Handler {
	if bb == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunked := len(r.TransferEncoding) > 0
		// A body over the size limit is limitBody's to refuse (413).
		if r.ContentLength <= 0 || r.ContentLength > int64(bb.limit.Burst) || r.Body == nil || r.Body == http.NoBody || declared == chunked {
			next.ServeHTTP(w, r)
			return
		}
		p := membrane.TrustFromContext(r.Context()).Principal
		if ok, wait := bb.l.AllowN(p.Actor, bb.limit, int(r.ContentLength)); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait.Seconds())))
			writeErr(w, r, http.StatusTooManyRequests, membrane.ERATELIMITED,
				"too many request bytes: retry after the time in the Retry-After header")
			return
		}
		next.ServeHTTP(w, r)
	})
}
