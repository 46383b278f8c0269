package browsertest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/browsertest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestGraphiQL: the GraphiQL page loads everything from the server (no
// request leaves loopback) and runs a query with the API key in its
// headers pane, showing the stored record in its result pane; the key
// does not end up in the page's URL.
func TestGraphiQL(t *testing.T) {
	key := "key-" + membrane.NewID()
	s := apptest.Start(t, apptest.Options{APIKey: key, EncryptionKey: apptest.SealKey()})
	scope := neo4jtest.Scope(t)
	marker := "PostgreSQL-" + membrane.NewID()
	graphQL(t, s.URL, key, fmt.Sprintf(`mutation { ingestObservation(input: {source: "agent-1", subject: "auth-service",
		predicate: "uses", object: %q, scope: %q}) { id } }`, marker, scope), nil)

	b := browsertest.New(t)
	b.Navigate(s.URL + "/")
	b.WaitVisible(".graphiql-execute-button")
	// The editors are CodeMirror 5 instances: set their text as a paste
	// would (typing would race GraphiQL's bracket closing and hints).
	b.Click(".graphiql-editor-tools button:nth-of-type(2)") // the Headers tab
	query := fmt.Sprintf(`{ records(filter: {scopes: [%q]}) { nodes { payload { ... on SemanticPayload { subject object } } } } }`, scope)
	headers := fmt.Sprintf(`{"Authorization": "Bearer %s"}`, key)
	setEditor(t, b, ".graphiql-query-editor", query)
	setEditor(t, b, ".graphiql-editor-tool .graphiql-editor:not(.hidden)", headers)
	b.Click(".graphiql-execute-button")
	got := b.WaitText(".graphiql-response", marker)
	if !strings.Contains(got, "auth-service") {
		t.Fatalf("result pane:\n%s", got)
	}
	b.Screenshot("result")
	// The key stays out of the address bar and the browser's history.
	if href := browsertest.Eval[string](b, `location.href`); strings.Contains(href, key) {
		t.Errorf("the API key is in the page's URL: %s", href)
	}

	// The page's scripts and styles came from the server itself.
	requests := b.Requests()
	for _, asset := range []string{"graphiql.min.js", "graphiql.min.css", "react.production.min.js", "react-dom.production.min.js"} {
		if !slices.ContainsFunc(requests, func(u string) bool {
			return strings.HasPrefix(u, s.URL+"/assets/vendor/") && strings.HasSuffix(u, "/"+asset)
		}) {
			t.Errorf("%s not loaded from %s/assets/vendor/; requests:\n%s", asset, s.URL, strings.Join(requests, "\n"))
		}
	}
}

// TestLoopback: which URLs count as staying on the machine.
func TestLoopback(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8080/assets/x.js", true},
		{"ws://127.0.0.1:8080/graphql", true},
		{"http://[::1]:8080/", true},
		{"http://localhost:3000/", true},
		{"data:image/png;base64,AAAA", true},
		{"about:blank", true},
		{"https://cdn.jsdelivr.net/npm/graphiql@4.1.2/graphiql.min.js", false},
		{"http://10.0.0.1/", false},
		{"http://127.0.0.1.example.com/", false},
		{"wss://example.com/graphql", false},
		{"ftp://127.0.0.1/", false},
	}
	for _, tt := range tests {
		if got := browsertest.Loopback(tt.url); got != tt.want {
			t.Errorf("Loopback(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
}

// setEditor replaces the text of the CodeMirror editor inside the first
// element matching the CSS selector.
func setEditor(t *testing.T, b *browsertest.Browser, selector, text string) {
	t.Helper()
	b.WaitVisible(selector + " .CodeMirror")
	ok := browsertest.Eval[bool](b, fmt.Sprintf(`(() => {
		const cm = document.querySelector(%q)?.CodeMirror;
		if (!cm) return false;
		cm.setValue(%q);
		return true;
	})()`, selector+" .CodeMirror", text))
	if !ok {
		t.Fatalf("no CodeMirror editor in %s", selector)
	}
}
