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
	coderws "github.com/coder/websocket"
	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
	"github.com/membrane/membrane/web"
	"github.com/vektah/gqlparser/v2/ast"
)

// MaxBodyBytes bounds a request body: the largest payload plus room for the
// rest of the request.
const MaxBodyBytes = membrane.MaxPayloadBytes + 1<<20

// Pinger reports whether the database answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// NewHandler returns Membrane's HTTP handler: GraphiQL at / (its scripts
// and styles at /assets/, embedded), the lineage explorer at /explorer/,
// GraphQL at /graphql (authenticated by keys), the graph downloads
// /graph.cyjs and /graph.graphml and MCP at /mcp (internal/mcp; both
// authenticated and limited alike), /healthz (the process is up), /readyz
// (Neo4j answers) and the Neo4j Browser kit under /browser/. opts (at most
// one) configures it; without, DefaultHandlerOptions.
func NewHandler(r *graph.Resolver, db Pinger, keys *membrane.Keyring, log *slog.Logger, opts ...HandlerOptions) http.Handler {
	o := DefaultHandlerOptions()
	if len(opts) > 0 {
		o = opts[0]
	}
	if keys.Open() {
		// Development mode: a dashboard under development on a loopback
		// origin may call the API (CORSOptions.AllowLoopback).
		o.CORS.AllowLoopback = true
	}
	// One set of rate buckets for HTTP requests and WebSocket inits.
	limits := newPrincipalLimits(o)
	heavySlots := newPrincipalSlots(HeavySlots, o.concurrencyWait())
	bodyBytes := newBodyBudget(o)
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
			OriginPatterns: o.CORS.originPatterns()}},
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
	if o.GraphiQL || o.Explorer {
		// The pages' scripts and styles (package web), only those of the
		// pages served: with the explorer off, its script and Cytoscape.js
		// are 404 even while GraphiQL's are served, and the other way round.
		var dirs []string
		if o.GraphiQL {
			dirs = append(dirs, graphiqlAssetDirs...)
		}
		if o.Explorer {
			dirs = append(dirs, explorerAssetDirs(web.FS)...)
		}
		assets := newAssetServer(web.FS, dirs)
		mux.Handle(assetsPrefix, assets)
		if o.GraphiQL {
			// Exactly "/": other unknown paths (a /metrics served elsewhere) are 404.
			mux.Handle("/{$}", graphiqlPage(assets))
		}
		if o.Explorer {
			mux.Handle("/explorer/{$}", newExplorerPage(web.FS))
			mux.Handle("/explorer", http.RedirectHandler("/explorer/", http.StatusMovedPermanently))
		}
	}
	mux.Handle("/graphql", authenticate(keys, graphQLRefusal, requestLimits(o, limits, bodyBytes, heavySlots, graphQLRefusal, transportErrors(srv))))
	// The graph downloads and MCP: authenticated and limited like
	// /graphql (MCP's refusals are JSON-RPC errors). A resolver without
	// services (a test of the transport alone) has none.
	if r.Services != nil {
		mux.Handle(PathGraphCytoscape, authenticate(keys, graphQLRefusal, requestLimits(o, limits, bodyBytes, heavySlots, graphQLRefusal,
			graphDownload(r.Services.Read, o.RequestTimeout, log, "application/json", "graph.cyjs", writeCytoscape))))
		mux.Handle(PathGraphML, authenticate(keys, graphQLRefusal, requestLimits(o, limits, bodyBytes, heavySlots, graphQLRefusal,
			graphDownload(r.Services.Read, o.RequestTimeout, log, "application/graphml+xml", "graph.graphml", writeGraphML))))
		mcpHandler := mcp.NewHTTPHandler(r.Services, mcp.HTTPOptions{
			Options:      mcp.Options{Log: log, Timeout: o.RequestTimeout, Version: o.Version},
			MaxBodyBytes: o.bodyLimit(), LocalhostProtection: keys.Open()})
		mux.Handle(mcp.Path, authenticate(keys, mcp.WriteHTTPError, requestLimits(o, limits, bodyBytes, heavySlots, mcp.WriteHTTPError, observeMCP(mcpHandler))))
	}
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
