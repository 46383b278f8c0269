package membrane_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestSearchScopes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		trust  membrane.Trust
		filter []string
		want   []string
		ok     bool
	}{
		{"all scopes, no filter: no clause", membrane.Trust{All: true}, nil, nil, false},
		{"all scopes, filter", membrane.Trust{All: true}, []string{"b", "a", "b"}, []string{"a", "b"}, true},
		{"trusted scopes and unscoped", membrane.Trust{Scopes: []string{"b", "a"}}, nil, []string{"", "a", "b"}, true},
		{"filter within trust", membrane.Trust{Scopes: []string{"a", "b"}}, []string{"a", "c", ""}, []string{"", "a"}, true},
		{"filter outside trust: nothing", membrane.Trust{Scopes: []string{"a"}}, []string{"c"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := membrane.SearchScopes(tc.trust, tc.filter)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SearchScopes = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestScopeTokenNeverAnAnalysedTerm(t *testing.T) {
	for _, scope := range []string{"", "tenant-a", "#u", "a b"} {
		tok := membrane.ScopeToken(scope)
		if !strings.HasPrefix(tok, "#") || strings.ContainsAny(tok, " \t") {
			t.Errorf("ScopeToken(%q) = %q: not one '#' token", scope, tok)
		}
		if terms := membrane.AnalyzeQuery(tok); len(terms) > 0 && terms[0] == tok {
			t.Errorf("the query %q analyses to the scope token itself", tok)
		}
	}
	if membrane.ScopeToken("a") == membrane.ScopeToken("b") || membrane.ScopeToken("") != "#u" {
		t.Error("scope tokens must differ by scope, and be #u unscoped")
	}
}
