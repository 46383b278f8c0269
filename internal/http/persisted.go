package http

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// LoadAllowList reads an allow-list file: a JSON object mapping the hex
// SHA-256 of each operation's text to the text. Every hash must be that of
// its text, so a file edited by hand cannot register one text under
// another's hash.
func LoadAllowList(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read allow-list: %w", err)
	}
	var ops map[string]string
	if err := json.Unmarshal(b, &ops); err != nil {
		return nil, fmt.Errorf("parse allow-list %s: want a JSON object of sha256 hex to query text: %w", path, err)
	}
	out := make(map[string]string, len(ops))
	for h, q := range ops {
		if got := QueryHash(q); got != strings.ToLower(h) {
			return nil, fmt.Errorf("allow-list %s: %s is not the sha256 of its query (that is %s)", path, h, got)
		}
		out[strings.ToLower(h)] = q
	}
	return out, nil
}

// QueryHash is the hex SHA-256 of a query's text, as automatic persisted
// queries and the allow-list name operations.
func QueryHash(query string) string {
	h := sha256.Sum256([]byte(query))
	return hex.EncodeToString(h[:])
}

// allowList runs only registered operations: by hash (the persistedQuery
// extension of automatic persisted queries, with or without the text) or by
// their exact text. Anything else is PERSISTED_QUERY_NOT_ALLOWED before it
// is even parsed.
type allowList map[string]string

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = allowList(nil)

// ExtensionName implements graphql.HandlerExtension.
func (allowList) ExtensionName() string { return "AllowList" }

// Validate implements graphql.HandlerExtension.
func (allowList) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (a allowList) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	hash := QueryHash(p.Query)
	if pq, ok := p.Extensions["persistedQuery"].(map[string]any); ok {
		h, _ := pq["sha256Hash"].(string)
		h = strings.ToLower(h)
		if p.Query != "" && h != hash {
			return notAllowed("the persistedQuery hash is not the hash of the query")
		}
		hash = h
	}
	q, ok := a[hash]
	if !ok {
		return notAllowed("this operation is not on the server's allow-list")
	}
	p.Query = q
	return nil
}

func notAllowed(msg string) *gqlerror.Error {
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, graph.Code(membrane.ENOTALLOWED))
	return err
}

// usePersistedQueries installs the allow-list when o has one, and
// otherwise automatic persisted queries when o asks for them: in
// allow-list mode the list is what a hash names, and no client may add to
// it.
func usePersistedQueries(srv *handler.Server, o HandlerOptions) {
	switch {
	case o.AllowList != nil:
		srv.Use(allowList(o.AllowList))
	case o.APQCacheSize > 0:
		srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](o.APQCacheSize)})
	}
}
