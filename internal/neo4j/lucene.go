package neo4j

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/membrane/membrane/internal/membrane"
)

// The full-text queries of the memory_terms and memory_blind indexes, in
// Lucene's classic query syntax, built from what the domain says of a
// query: its analysed terms (membrane.AnalyzeQuery), the words that expand
// it with their weights (membrane.Expansion) and the scopes it searches
// (membrane.SearchScopes). Pure functions: the retrieval statement builds
// the expanded query the same way in Cypher (retrieve_expansion.cypher),
// and TestExpansionStatement holds the two together.

// maxScopeClause is the most scopes a full-text query names in its scope
// clause: Lucene refuses a query of more than 1024 clauses, so a caller
// trusted with more scopes searches without the clause (the Cypher gate
// still restricts what it sees; only the candidates are then taken across
// scopes, as before the clause existed).
const maxScopeClause = 512

// searchScopes are the scopes the request's full-text query is restricted
// to inside the index (scopedLucene): membrane.SearchScopes of the
// request's trust and the scopes filter, unrestricted (ok false) when they
// are more than one query's scope clause can name.
func searchScopes(ctx context.Context, filter []string) (scopes []string, ok bool) {
	scopes, ok = membrane.SearchScopes(membrane.TrustFromContext(ctx), filter)
	if len(scopes) > maxScopeClause {
		return nil, false
	}
	return scopes, ok
}

// luceneQuery is the full-text query for terms: any of them (OR; BM25
// rewards records matching more of them). Terms come from AnalyzeQuery
// (lower-case letters, digits and '_'), so none carries Lucene syntax;
// escaping anyway keeps a query's shape fixed whatever a caller passes.
// A whole identifier (a term with '_', which AnalyzeQuery emits beside the
// identifier's words) weighs wholeIdentifierBoost: it is a rare term, and
// at full weight an identifier counted its words once more at a high IDF
// (docs/retrieval.md, "Text analysis and the search index"). The boost does not change
// which records match.
func luceneQuery(terms []string) string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		whole := strings.Contains(t, "_")
		if t = luceneEscaper.Replace(t); t == "" {
			continue
		}
		if whole {
			t += "^" + wholeIdentifierBoost
		}
		out = append(out, t)
	}
	return strings.Join(out, " ")
}

// wholeIdentifierBoost is the weight of a whole identifier's term in
// luceneQuery, as Lucene query syntax.
const wholeIdentifierBoost = "0.3"

// luceneEscaper escapes Lucene's query syntax (classic query parser) and
// turns whitespace, which would split a term, into nothing.
var luceneEscaper = func() *strings.Replacer {
	var pairs []string
	for _, c := range `\+-!():^[]"{}~*?|&/` {
		pairs = append(pairs, string(c), `\`+string(c))
	}
	return strings.NewReplacer(append(pairs, " ", "", "\t", "", "\n", "", "\r", "")...)
}()

// requiredLucene is luceneQuery(terms) as a required clause, "+(<terms>)",
// or "" without terms. Alone it matches and scores as luceneQuery(terms)
// (Lucene rewrites a lone required clause to the clause); optional clauses
// beside it (expandedLuceneQuery) only re-rank its matches.
func requiredLucene(terms []string) string {
	q := luceneQuery(terms)
	if q == "" {
		return ""
	}
	return "+(" + q + ")"
}

// expandedLuceneQuery is the full-text query of terms expanded with exp:
// the query's own terms required (requiredLucene) and each expansion term
// beside them as an optional clause boosted by its weight (formatBoost),
// "+(<terms>) <exp>^<weight>…". A record must match one of the query's own
// terms; the expansion only re-ranks those records, so it never brings in
// a record that shares no word with the query (topic drift). Without
// terms it is "". The retrieval statement builds the same string
// (retrieve_expansion.cypher), inside scopedLucene when the request is
// scoped (the scope clause outside: flattened beside the lent words, it
// cost the full-text query 0.5 ms more at 100k records); it escapes
// nothing, since a word that may expand a query is letters only.
func expandedLuceneQuery(terms []string, exp []membrane.WeightedTerm) string {
	q := requiredLucene(terms)
	if q == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(q)
	for _, e := range exp {
		t := luceneEscaper.Replace(e.Term)
		if t == "" || !(e.Weight > 0) {
			continue
		}
		b.WriteString(" " + t + "^" + formatBoost(e.Weight))
	}
	return b.String()
}

// formatBoost writes a boost in Lucene's query syntax: four decimals,
// rounded half up (as Cypher's round, which the retrieval statement
// formats its boosts with), never an exponent, which the query parser
// would read as a term.
func formatBoost(w float64) string {
	return strconv.FormatFloat(math.Round(w*1e4)/1e4, 'f', 4, 64)
}

// scopedLucene restricts the full-text query q to records of scopes (see
// searchScopes): both clauses are required, and the scope clause weighs
// nothing (^0), so a record's score is that of q alone. Without the
// restriction in the query, the index's best matches would be taken across
// every scope before the gate filtered them, and another tenant's better
// matches would crowd a caller's own records out of the candidates.
func scopedLucene(q string, scopes []string) string {
	before, after := scopedLuceneAround(scopes)
	return before + q + after
}

// scopedLuceneAround is what scopedLucene writes before and after its
// query, for a statement that builds the query itself (the retrieval's
// expansion, retrieve_expansion.cypher). A record's scope is indexed as
// its membrane.ScopeToken.
func scopedLuceneAround(scopes []string) (before, after string) {
	toks := make([]string, len(scopes))
	for i, s := range scopes {
		toks[i] = membrane.ScopeToken(s)
	}
	return "+(" + strings.Join(toks, " ") + ")^0 +(", ")"
}

// textLucene is the query of memory_terms for terms (luceneQuery),
// restricted to the scopes the request searches (searchScopes) when
// scoped, so that the index's best $scan matches are the caller's own. It
// is unused (and empty) without terms.
func textLucene(terms []string, scopes []string, scoped bool) string {
	q := luceneQuery(terms)
	if q == "" || !scoped {
		return q
	}
	return scopedLucene(q, scopes)
}
