package neo4j_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

func TestLuceneQuery(t *testing.T) {
	tests := []struct {
		terms []string
		want  string
	}{
		{nil, ""},
		{[]string{"postgres"}, "postgres"},
		{[]string{"auth", "database"}, "auth database"},
		// A whole identifier weighs less than its words.
		{[]string{"uses_database", "use", "databas"}, "uses_database^0.3 use databas"},
		// Never from AnalyzeQuery, but escaped all the same.
		{[]string{`title:x`, "(y*", `"z"~2`, "a b", "&&", "", "x_y:z"}, `title\:x \(y\* \"z\"\~2 ab \&\& x_y\:z^0.3`},
	}
	for _, tt := range tests {
		if got := neo4j.LuceneQuery(tt.terms); got != tt.want {
			t.Errorf("LuceneQuery(%q) = %q, want %q", tt.terms, got, tt.want)
		}
	}
}

func TestExpandedLuceneQuery(t *testing.T) {
	exp := []membrane.WeightedTerm{{Term: "postgresql", Weight: 0.5}, {Term: "cluster", Weight: 0.25}}
	tests := []struct {
		terms []string
		exp   []membrane.WeightedTerm
		want  string
	}{
		{nil, nil, ""},
		// Nothing to expand without terms: the query matches nothing.
		{nil, exp, ""},
		{[]string{"bill", "billing_service"}, nil, "+(bill billing_service^0.3)"},
		// The query's own terms are required, the expansion re-ranks.
		{[]string{"databas", "bill"}, exp, "+(databas bill) postgresql^0.5000 cluster^0.2500"},
		// Weightless terms are left out; syntax is escaped all the same.
		{[]string{"a"}, []membrane.WeightedTerm{{Term: "zero", Weight: 0}, {Term: "x:y", Weight: 0.1}}, `+(a) x\:y^0.1000`},
		{[]string{"a"}, []membrane.WeightedTerm{{Term: "zero", Weight: 0}}, "+(a)"},
	}
	for _, tt := range tests {
		if got := neo4j.ExpandedLuceneQuery(tt.terms, tt.exp); got != tt.want {
			t.Errorf("ExpandedLuceneQuery(%q, %v) = %q, want %q", tt.terms, tt.exp, got, tt.want)
		}
	}
}

func TestRequiredLucene(t *testing.T) {
	for _, tt := range []struct {
		terms []string
		want  string
	}{
		{nil, ""},
		{[]string{"bill", "billing_service"}, "+(bill billing_service^0.3)"},
	} {
		if got := neo4j.RequiredLucene(tt.terms); got != tt.want {
			t.Errorf("RequiredLucene(%q) = %q, want %q", tt.terms, got, tt.want)
		}
	}
}

// Boosts are written as the retrieval statement writes them: four
// decimals, half up, never an exponent (which Lucene's parser would read
// as a term).
func TestFormatBoost(t *testing.T) {
	for _, tt := range []struct {
		w    float64
		want string
	}{
		{0.5, "0.5000"},
		{0.5 / 3, "0.1667"},
		// Exactly half way in binary: half up, where %.4f rounds to even.
		{0.5 / 16, "0.0313"},
		{0.00004, "0.0000"},
		{1e-7, "0.0000"},
		{1, "1.0000"},
	} {
		if got := neo4j.FormatBoost(tt.w); got != tt.want {
			t.Errorf("FormatBoost(%v) = %q, want %q", tt.w, got, tt.want)
		}
	}
}

func TestScopedLucene(t *testing.T) {
	if got := neo4j.ScopedLucene("x y", []string{"", "a"}); got != "+(#u "+membrane.ScopeToken("a")+")^0 +(x y)" {
		t.Errorf("ScopedLucene = %q", got)
	}
}

// A request searches its scopes in the query's scope clause, unless they
// are more than one query can name: then the index is searched without
// it, and the gate alone restricts what the request sees.
func TestSearchScopes(t *testing.T) {
	many := make([]string, 600)
	for i := range many {
		many[i] = fmt.Sprint("s", i)
	}
	for _, tc := range []struct {
		name   string
		trust  membrane.Trust
		filter []string
		want   []string
		ok     bool
	}{
		{"all scopes, no filter: no clause", membrane.Trust{All: true}, nil, nil, false},
		{"trusted scopes and unscoped", membrane.Trust{Scopes: []string{"b", "a"}}, nil, []string{"", "a", "b"}, true},
		{"too many scopes for one query: no clause", membrane.Trust{Scopes: many}, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := neo4j.SearchScopes(membrane.NewContextWithTrust(t.Context(), tc.trust), tc.filter)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SearchScopes = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
