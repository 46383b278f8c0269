package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/ast"
)

// limitBody refuses a request body over n bytes with 413
// PAYLOAD_TOO_LARGE, and one not received within readTimeout (0: no
// limit) with 408 TIMEOUT, answered with writeErr. The body is read here,
// whole, so the refusal is a coded error whether or not the client
// announced the length; a GraphQL transport reading past a limit itself
// would only see a broken body.
//
// The read deadline (set by bodyDeadline) is cleared once the body is read,
// so it never cuts a long-lived request such as an SSE stream.
func limitBody(n int64, readTimeout time.Duration, writeErr errorWriter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tooLarge := func() {
			writeErr(w, r, http.StatusRequestEntityTooLarge, membrane.ETOOLARGE,
				fmt.Sprintf("the request body exceeds the limit of %d bytes", n))
		}
		if r.ContentLength > n {
			tooLarge()
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, n))
			if err != nil {
				var mbe *http.MaxBytesError
				switch {
				case errors.As(err, &mbe):
					// The part read is what the refusal may look at (an
					// MCP request's id).
					r.Body = io.NopCloser(bytes.NewReader(b))
					tooLarge()
				case readTimeout > 0 && errors.Is(err, os.ErrDeadlineExceeded):
					// The connection's reads are done for: close it after
					// the answer, which a client still sending may read.
					w.Header().Set("Connection", "close")
					writeErr(w, r, http.StatusRequestTimeout, membrane.ETIMEOUT,
						fmt.Sprintf("the request body was not received within %v", readTimeout))
				default:
					writeErr(w, r, http.StatusBadRequest, membrane.EINVALID, "could not read the request body")
				}
				return
			}
			if readTimeout > 0 {
				// net/http clears it too, over HTTP/1, when it starts
				// watching for the client going away after the body; not
				// relied upon, since a stream must outlive it.
				_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			// Known now, for what follows (chargeBody of a chunked body).
			r.ContentLength = int64(len(b))
		}
		next.ServeHTTP(w, r)
	})
}

// bodyDeadline gives reading a request's body d from now (0: no limit), as
// a read deadline on its connection. It runs first, so that the body of a
// request refused before it is read (401, 429) is bounded too: net/http
// reads what is left of it after the answer, to reuse the connection, and
// a client trickling it would hold the connection for as long as it
// liked. limitBody clears the deadline once it has read the body; a
// request without a body (a WebSocket upgrade, a GET) gets none, since
// after a hijack the deadline would stay on the socket.
// http.Server.ReadTimeout is not used: it would also cut the reads of
// long-lived connections.
func bodyDeadline(d time.Duration, next http.Handler) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// A writer that cannot take a deadline (a test recorder)
			// reads without one.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		next.ServeHTTP(w, r)
	})
}

// useQueryLimits holds every operation to o's limits: the parser's token
// limit, then the limits of graph.UseQueryLimits by the role of the
// request's principal; and while it runs, to the request timeout.
func useQueryLimits(srv *handler.Server, schema *ast.Schema, o HandlerOptions) {
	srv.SetParserTokenLimit(o.ParserTokenLimit)
	graph.UseQueryLimits(srv, schema, func(ctx context.Context) graph.QueryLimits {
		return o.limitsFor(membrane.TrustFromContext(ctx).Principal.Role)
	}, o.Introspection)
	// Outside the deadline: waiting for a slot does not eat the
	// operation's time.
	srv.AroundResponses(costlyOperations(newPrincipalSlots(o.PrincipalConcurrency, o.concurrencyWait())))
	if o.RequestTimeout > 0 {
		srv.AroundResponses(withDeadline(o.RequestTimeout))
	}
}

// withDeadline gives the execution of a query or mutation a deadline of d.
// Subscriptions get none: a subscription waits for its next event for as
// long as nothing changes (each read of the feed is still bounded by the
// Neo4j transaction timeout). The Neo4j store bounds every transaction
// by the time its context has left, so the database itself abandons the
// work of a request that ran out of time, and the resolver that waited
// reports TIMEOUT. It wraps gqlgen's responses rather than the HTTP
// request: gqlgen answers a request whose context has ended with no body
// at all, and a timed-out request must get its coded error.
func withDeadline(d time.Duration) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if graphql.HasOperationContext(ctx) {
			if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Subscription {
				return next(ctx)
			}
		}
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return next(ctx)
	}
}

// requestLimits holds an authenticated request to its rate limit, its body
// to its principal's budget of bytes (bb), a heavy one to the server's
// slots for large bodies (hs), then its body to the size limit: a request
// refused by its rate, budget or the slots costs no body read (a chunked
// body is charged once read, before it is decoded). writeErr answers a
// refused one.
func requestLimits(o HandlerOptions, pl *principalLimits, bb *bodyBudget, hs *principalSlots, writeErr errorWriter, next http.Handler) http.Handler {
	return rateLimit(pl, writeErr, chargeBody(bb, true, writeErr, limitHeavyBodies(hs, writeErr,
		limitBody(o.bodyLimit(), o.ReadTimeout, writeErr, chargeBody(bb, false, writeErr, next)))))
}

// bodyLimit is the largest request body, and WebSocket message, o allows.
func (o HandlerOptions) bodyLimit() int64 {
	if o.MaxBodyBytes <= 0 {
		return MaxBodyBytes
	}
	return o.MaxBodyBytes
}
