package http_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestPersistedQueries: automatic persisted queries register a query by
// its hash and run it by the hash alone.
func TestPersistedQueries(t *testing.T) {
	c := gqltest.New(t)
	scope := neo4jtest.Scope(t)
	q := `query($s: [String!]) { records(filter: {scopes: $s}) { totalCount } }`
	pq := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": membranehttp.QueryHash(q)}}
	vars := map[string]any{"s": []any{scope}}

	if r := c.Post(map[string]any{"extensions": pq, "variables": vars}); r.Code() != "PERSISTED_QUERY_NOT_FOUND" {
		t.Fatalf("unknown hash: %s", r.Body)
	}
	if r := c.Post(map[string]any{"query": q, "extensions": pq, "variables": vars}); r.Code() != "" {
		t.Fatalf("register: %s", r.Body)
	}
	r := c.Post(map[string]any{"extensions": pq, "variables": vars})
	if r.Code() != "" || !strings.Contains(string(r.Data), `"totalCount":0`) {
		t.Fatalf("by hash: %s", r.Body)
	}
	wrong := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": membranehttp.QueryHash("other")}}
	if r := c.Post(map[string]any{"query": q, "extensions": wrong}); len(r.Errors) == 0 {
		t.Fatalf("mismatched hash accepted: %s", r.Body)
	}
}

// TestAllowList: in allow-list mode only registered operations run, by
// hash or by their exact text; anything else is
// PERSISTED_QUERY_NOT_ALLOWED (422) and runs no Cypher.
func TestAllowList(t *testing.T) {
	allowed := `query($s: [String!]) { records(filter: {scopes: $s}) { totalCount } }`
	opts := membranehttp.DefaultHandlerOptions()
	opts.AllowList = map[string]string{membranehttp.QueryHash(allowed): allowed}
	c := gqltest.NewOpts(t, opts)
	vars := map[string]any{"s": []any{neo4jtest.Scope(t)}}
	pq := func(q string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": membranehttp.QueryHash(q)}}
	}
	tests := []struct {
		name string
		req  map[string]any
		ok   bool
	}{
		{"by hash", map[string]any{"extensions": pq(allowed), "variables": vars}, true},
		{"by hash with the text", map[string]any{"query": allowed, "extensions": pq(allowed), "variables": vars}, true},
		{"by exact text", map[string]any{"query": allowed, "variables": vars}, true},
		{"another text", map[string]any{"query": `{ records { nodes { id } } }`}, false},
		{"the text reformatted", map[string]any{"query": allowed + " ", "variables": vars}, false},
		{"an unknown hash", map[string]any{"extensions": pq("{ records { totalCount } }")}, false},
		{"an allowed hash with another text", map[string]any{"query": `{ records { nodes { id } } }`, "extensions": pq(allowed)}, false},
		{"introspection", map[string]any{"query": `{ __schema { types { name } } }`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.DB.TxCount()
			r := c.Post(tt.req)
			if tt.ok {
				if r.Code() != "" || !strings.Contains(string(r.Data), "totalCount") {
					t.Fatalf("refused: %d %s", r.Status, r.Body)
				}
				return
			}
			if r.Code() != "PERSISTED_QUERY_NOT_ALLOWED" || r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			if n := c.DB.TxCount() - before; n != 0 {
				t.Fatalf("%d transactions ran", n)
			}
		})
	}
}

// TestLoadAllowList: the file maps each operation's hash to its text, and
// a hash that is not its text's is refused.
func TestLoadAllowList(t *testing.T) {
	q := `{ records { totalCount } }`
	tests := []struct {
		name, content string
		ok            bool
	}{
		{"valid", `{"` + membranehttp.QueryHash(q) + `": "{ records { totalCount } }"}`, true},
		{"upper-case hash", `{"` + strings.ToUpper(membranehttp.QueryHash(q)) + `": "{ records { totalCount } }"}`, true},
		{"empty", `{}`, true},
		{"wrong hash", `{"` + membranehttp.QueryHash("other") + `": "{ records { totalCount } }"}`, false},
		{"not an object", `["{ records { totalCount } }"]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ops.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			ops, err := membranehttp.LoadAllowList(path)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v", err)
			}
			if tt.ok && ops == nil {
				t.Fatal("nil allow-list: allow-list mode would be off")
			}
			if tt.ok && len(ops) == 1 && ops[membranehttp.QueryHash(q)] != q {
				t.Fatalf("ops = %v", ops)
			}
		})
	}
	if _, err := membranehttp.LoadAllowList(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("a missing file was accepted")
	}
}
