package membrane

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// ScopeToken is the term a record's scope is indexed under in the
// full-text indexes (memory_terms, memory_blind), beside its search terms:
// "#s" and a digest of the scope, or "#u" for an unscoped record. '#' is
// no word character, so no analysed term (AnalyzeText, AnalyzeQuery) and
// no blind token (hex) can equal one, and a query's words never match it.
// It is an unkeyed digest: the scope is stored in clear beside it anyway.
func ScopeToken(scope string) string {
	if scope == "" {
		return "#u"
	}
	sum := sha256.Sum256([]byte(scope))
	return "#s" + hex.EncodeToString(sum[:12])
}

// IndexDocument is a full-text index entry: the scope token, then the
// terms (space-separated). Without terms there is nothing to find the
// record by, and the entry is empty.
func IndexDocument(scope, terms string) string {
	if terms == "" {
		return ""
	}
	return ScopeToken(scope) + " " + terms
}

// SearchScopes are the scopes a request's text search is restricted to
// inside the index: the scopes the caller is trusted with plus unscoped
// records, intersected with the scopes filter when there is one. ok is
// false when no restriction applies (a principal trusted with every scope
// and no filter); an empty, ok result means no record can match. The
// store may search unrestricted where a query cannot name so many scopes:
// its gate still hides what the caller may not see.
func SearchScopes(t Trust, filter []string) (scopes []string, ok bool) {
	switch {
	case filter == nil && t.All:
		return nil, false
	case filter == nil:
		scopes = append([]string{""}, t.Scopes...)
	default:
		for _, s := range filter {
			if t.All || s == "" || slices.Contains(t.Scopes, s) {
				scopes = append(scopes, s)
			}
		}
	}
	slices.Sort(scopes)
	return slices.Compact(scopes), true
}
