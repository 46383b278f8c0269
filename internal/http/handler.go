package http

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/99designs/gqlgen/graphql/playground"
	coderws "github.com/coder/websocket"
	"github.com/membrane/membrane/graph"
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
// /graphql (authenticated by keys), /healthz (the process is up),
// /readyz (Neo4j answers) and the Neo4j Browser kit under /browser/. opts (at most one) configures it; without,
// DefaultHandlerOptions.
func NewHandler(r *graph.Resolver, db Pinger, keys *membrane.Keyring, log *slog.Logger, opts ...HandlerOptions) http.Handler {
	o := DefaultHandlerOptions()
	if len(opts) > 0 {
		o = opts[0]
	}
	// One set of rate buckets for HTTP requests and WebSocket inits.
	limits := newPrincipalLimits(o)
	keepAlive := cmp.Or(o.KeepAliveInterval, DefaultKeepAliveInterval)
	es := graph.NewCostedSchema(r)
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
	srv.SetErrorPresenter(graph.PresentError(log))
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
	// The Neo4j Browser kit (browserkit.go) is public and readable from any
	// origin, whatever the API's CORS allows: it is routed past cors.
	outer := http.NewServeMux()
	outer.Handle("/browser/", browserKitHandler())
	outer.Handle("/", cors(o.CORS, mux))
	return recoverPanics(bodyDeadline(o.ReadTimeout, outer))
}
