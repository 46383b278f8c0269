package browsertest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/browsertest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestGraphiQL: the GraphiQL page loads everything from the server (no
// request leaves loopback) and runs a query, opened from a link that
// carries the query and the API key header, showing the stored record in
// its result pane.
func TestGraphiQL(t *testing.T) {
	key := "key-" + membrane.NewID()
	s := apptest.Start(t, apptest.Options{APIKey: key, EncryptionKey: apptest.SealKey()})
	scope := neo4jtest.Scope(t)
	marker := "PostgreSQL-" + membrane.NewID()
	post(t, s.URL, key, fmt.Sprintf(`mutation { ingestObservation(input: {source: "agent-1", subject: "auth-service",
		predicate: "uses", object: %q, scope: %q}) { id } }`, marker, scope))

	b := browsertest.New(t)
	query := fmt.Sprintf(`{ records(filter: {scopes: [%q]}) { nodes { payload { ... on SemanticPayload { subject object } } } } }`, scope)
	headers := fmt.Sprintf(`{"Authorization": "Bearer %s"}`, key)
	b.Navigate(s.URL + "/?" + url.Values{"query": {query}, "headers": {headers}}.Encode())
	b.WaitVisible(".graphiql-execute-button")
	b.Click(".graphiql-execute-button")
	got := b.WaitText(".graphiql-response", marker)
	if !strings.Contains(got, "auth-service") {
		t.Fatalf("result pane:\n%s", got)
	}
	b.Screenshot("result")

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

// post runs a GraphQL operation as the key's principal and fails the test
// on any error.
func post(t *testing.T, base, key, query string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("%s: status %d, errors %s, decode %v", query, resp.StatusCode, r.Errors, err)
	}
}
