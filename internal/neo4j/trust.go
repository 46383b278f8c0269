package neo4j

import (
	"context"

	"github.com/membrane/membrane/internal/membrane"
)

// gated adds the request's trust parameters ($ceiling, $allScopes,
// $trustScopes) to params: every read statement filters by them in Cypher,
// on indexed properties, so invisible records are never read at all.
func gated(ctx context.Context, params map[string]any) map[string]any {
	for k, v := range membrane.TrustFromContext(ctx).CypherParams() {
		params[k] = v
	}
	return params
}

// view returns r as the request may see it (redacted one level above its
// ceiling), or nil. Cypher already left out what is invisible; this is the
// last word on what a record shows.
func view(ctx context.Context, r *membrane.Record) *membrane.Record {
	return membrane.TrustFromContext(ctx).View(r)
}
