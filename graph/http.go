package graph

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/99designs/gqlgen/graphql/playground"
	coderws "github.com/coder/websocket"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
	"github.com/vektah/gqlparser/v2/ast"
)

// MaxBodyBytes bounds a request body: the largest payload plus room for the
// rest of the request.
const MaxBodyBytes = membrane.MaxPayloadBytes + 1<<20

// Pinger reports whether the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// NewHandler returns Membrane's HTTP handler: GraphiQL at /, GraphQL at
// /graphql (authenticated by keys), /healthz (the process is up) and
// /readyz (Neo4j answers). opts (at most one) configures it; without,
// DefaultHandlerOptions.
func NewHandler(r *Resolver, db Pinger, keys *membrane.Keyring, log *slog.Logger, opts ...HandlerOptions) http.Handler {
	o := DefaultHandlerOptions()
	if len(opts) > 0 {
		o = opts[0]
	}
	// One set of rate buckets for HTTP requests and WebSocket inits.
	limits := newPrincipalLimits(o)
	keepAlive := cmp.Or(o.KeepAliveInterval, DefaultKeepAliveInterval)
	cfg := Config{Resolvers: r}
	setComplexity(&cfg.Complexity)
	es := costRoots(NewExecutableSchema(cfg))
	srv := handler.New(es)
	srv.AddTransport(transport.Options{})
	// Subscriptions: WebSocket (graphql-transport-ws and graphql-ws) and
	// SSE, which must come before POST, since an SSE request is a POST
	// that accepts text/event-stream.
	// A WebSocket message may be as large as a request body.
	wsReadLimit := o.bodyLimit()
	srv.AddTransport(newWebsocketTransport(transport.Websocket{
		PayloadReadLimit: &wsReadLimit,
		// Browsers send Origin on WebSocket upgrades but do not apply CORS
		// to them: the same origins as CORS (scheme://host[:port], or "*")
		// may connect, besides the server's own; others are refused.
		Implementation: transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{
			OriginPatterns: o.CORS.AllowedOrigins}},
		InitFunc:              authenticateInit(keys, limits),
		InitTimeout:           10 * time.Second,
		KeepAlivePingInterval: keepAlive,
	}))
	srv.AddTransport(sseTransport{keepAlive: keepAlive})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(OperationObserver{}) // metrics and spans per operation, when Observe wraps this handler
	if limits != nil {
		srv.Use(operationRateLimit{limits})
	}
	usePersistedQueries(srv, o)
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	useQueryLimits(srv, es.Schema(), o)
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		safego.Recovered("resolver", p, "path", graphql.GetPath(ctx).String())
		return errors.New("panic") // presented as INTERNAL without detail
	})

	mux := http.NewServeMux()
	if o.GraphiQL {
		// Exactly "/": other unknown paths (a /metrics served elsewhere) are 404.
		mux.Handle("/{$}", playground.Handler("Membrane", "/graphql"))
	}
	mux.Handle("/graphql", authenticate(keys, requestLimits(o, limits, transportErrors(srv))))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			log.WarnContext(ctx, "not ready", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "neo4j": "unreachable"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "neo4j": "ok"})
	})
	return recoverPanics(bodyDeadline(o.ReadTimeout, cors(o.CORS, mux)))
}

// recoverPanics answers a request whose handler panicked outside a
// resolver (gqlgen recovers those) with a coded 500, when nothing was
// written yet, and reports the panic as every other (safego): logged at
// ERROR with its stack, counted. net/http would recover it too, but only
// to drop the connection, with a line on the standard logger and no count.
// http.ErrAbortHandler, a deliberate abort, goes on up.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &touchWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			safego.Recovered("http handler", p, "path", r.URL.Path)
			if !tw.touched {
				writeError(w, http.StatusInternalServerError, membrane.EINTERNAL, "Internal error.")
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// touchWriter remembers whether anything was written (or the connection
// hijacked).
type touchWriter struct {
	http.ResponseWriter
	touched bool
}

func (t *touchWriter) WriteHeader(status int) {
	t.touched = true
	t.ResponseWriter.WriteHeader(status)
}

func (t *touchWriter) Write(b []byte) (int, error) {
	t.touched = true
	return t.ResponseWriter.Write(b)
}

// Flush passes streaming responses through.
func (t *touchWriter) Flush() { _ = t.FlushError() }

// FlushError flushes and reports a failed flush (http.ResponseController
// prefers it to Flush), so that a stream learns at once that its client
// is gone.
func (t *touchWriter) FlushError() error {
	t.touched = true
	return http.NewResponseController(t.ResponseWriter).Flush()
}

// Hijack hands the connection to a WebSocket.
func (t *touchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.touched = true
	return http.NewResponseController(t.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (t *touchWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
