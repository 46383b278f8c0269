package neo4j

import (
	"context"

	"github.com/membrane/membrane/internal/membrane"
)

// gated adds the request's trust parameters ($ceiling, $allScopes,
// $trustScopes) to params: every read statement filters by them in Cypher,
// on indexed properties, so invisible records are never read at all.
func gated(ctx context.Context, params map[string]any) map[string]any {
	for k, v := range trustParams(membrane.TrustFromContext(ctx)) {
		params[k] = v
	}
	return params
}

// trustParams are the parameters of t that every gated Cypher statement
// takes: $ceiling (full view up to it, redacted one above), $allScopes and
// $trustScopes (a list, empty rather than null, when not every scope).
func trustParams(t membrane.Trust) map[string]any {
	scopes := t.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return map[string]any{"ceiling": int64(t.Ceiling), "allScopes": t.All, "trustScopes": scopes}
}

// view returns r as the request may see it (redacted one level above its
// ceiling), or nil. Cypher already left out what is invisible; this is the
// last word on what a record shows.
func view(ctx context.Context, r *membrane.Record) *membrane.Record {
	return membrane.TrustFromContext(ctx).View(r)
}
