package membrane

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// maxScopeClause is the most scopes a full-text query names in its scope
// clause: Lucene refuses a query of more than 1024 clauses, so a caller
// trusted with more scopes searches without the clause (the Cypher gate
// still restricts what it sees; only the candidates are then taken across
// scopes, as before the clause existed).
const maxScopeClause = 512

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

// SearchScopes are the scopes a request's full-text query is restricted
// to inside the index (ScopedLucene): the scopes the caller is trusted
// with plus unscoped records, intersected with the scopes filter when
// there is one. ok is false when no restriction applies (a principal
// trusted with every scope and no filter, or too many scopes for one
// query); an empty, ok result means no record can match.
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
	scopes = slices.Compact(scopes)
	if len(scopes) > maxScopeClause {
		return nil, false
	}
	return scopes, true
}

// ScopedLucene restricts the full-text query q to records of scopes (see
// SearchScopes): both clauses are required, and the scope clause weighs
// nothing (^0), so a record's score is that of q alone. Without the
// restriction in the query, the index's best matches would be taken across
// every scope before the gate filtered them, and another tenant's better
// matches would crowd a caller's own records out of the candidates.
func ScopedLucene(q string, scopes []string) string {
	before, after := ScopedLuceneAround(scopes)
	return before + q + after
}

// ScopedLuceneAround is what ScopedLucene writes before and after its
// query, for a statement that builds the query itself (the retrieval's
// expansion, retrieve_expansion.cypher).
func ScopedLuceneAround(scopes []string) (before, after string) {
	toks := make([]string, len(scopes))
	for i, s := range scopes {
		toks[i] = ScopeToken(s)
	}
	return "+(" + strings.Join(toks, " ") + ")^0 +(", ")"
}
