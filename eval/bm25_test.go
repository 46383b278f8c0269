package eval_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/eval"
)

func TestBaselineTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"The databases were deployed", []string{"databas", "deploy"}},
		{"max_connections=200 on payment-service", []string{"max", "connect", "200", "payment", "servic"}},
		// No identifier splitting beyond non-alphanumerics: camelCase stays one token.
		{"usesDatabase in k8s.io/api", []string{"usesdatabas", "k8s", "io", "api"}},
		{"it is what it was", nil},
		{"Café ÜBER", []string{"café", "über"}},
	}
	for _, tt := range tests {
		if got := eval.BaselineTokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("BaselineTokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBM25(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	texts := []string{
		"we deployed the payment service to production",
		"the database ran out of connections, database restarted",
		"lunch was pasta again",
		"the database is fine",
	}
	b := eval.NewBM25(ids, texts)
	tests := []struct {
		name  string
		q     string
		limit int
		want  []string
	}{
		// Term frequency counts (b twice) and the shorter d is not enough to pass it.
		{"tf and stemming", "databases", 10, []string{"b", "d"}},
		{"stemmed verb", "deploying", 10, []string{"a"}},
		// "connections" is rarer than "database": b first.
		{"rarer term weighs more", "database connection", 10, []string{"b", "d"}},
		{"limit", "database", 1, []string{"b"}},
		{"no shared term", "kubernetes", 10, []string{}},
		{"stop words only", "the of and", 10, []string{}},
		// Counted three times, database would lift b (0.85 a time) over a (1.13).
		{"repeated query terms count once", "database database database deploy", 10, []string{"a", "b", "d"}},
	}
	for _, tt := range tests {
		if got := b.Search(tt.q, tt.limit); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Search(%q) = %q, want %q", tt.name, tt.q, got, tt.want)
		}
	}
}
