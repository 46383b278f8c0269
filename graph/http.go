package graph

import (
	"context"
	"encoding/json"
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
	"github.com/membrane/membrane/internal/membrane"
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
// /readyz (Neo4j answers).
func NewHandler(r *Resolver, db Pinger, keys *membrane.Keyring, log *slog.Logger) http.Handler {
	srv := handler.New(NewExecutableSchema(Config{Resolvers: r}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in resolver", "panic", p, "path", graphql.GetPath(ctx).String())
		return errors.New("panic") // presented as INTERNAL without detail
	})

	mux := http.NewServeMux()
	mux.Handle("/", playground.Handler("Membrane", "/graphql"))
	mux.Handle("/graphql", http.MaxBytesHandler(authenticate(keys, transportErrors(srv)), MaxBodyBytes))
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
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
