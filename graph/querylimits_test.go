package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/membrane/membrane/graph"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestQueryLimits: operations over a limit fail with
// COMPLEXITY_LIMIT_EXCEEDED (HTTP 422) before any Cypher runs; costs grow
// with page sizes and limits, and admins have limits of their own.
func TestQueryLimits(t *testing.T) {
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"nothing"}}
	writer := membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{"nothing"}}
	opts := membranehttp.DefaultHandlerOptions()
	opts.Limits = map[membrane.Role]graph.QueryLimits{
		membrane.RoleReader: {Complexity: 1000, Depth: 5},
		membrane.RoleWriter: {}, // no limits
		membrane.RoleAdmin:  {Complexity: 5000, Depth: 8},
	}
	opts.ParserTokenLimit = 500
	admin := newClientOpts(t, opts, reader, writer)
	rd, wr := admin.as(reader.Actor), admin.as(writer.Actor)

	// Spreading a fragment twice per level doubles the selection: 2^40
	// fields expanded, from a few hundred tokens.
	var fanout strings.Builder
	fanout.WriteString("query { records(first: 1) { nodes { ...F0 } } }\nfragment F40 on Record { id }\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&fanout, "fragment F%d on Record { ...F%d ...F%d }\n", i, i+1, i+1)
	}

	tests := []struct {
		name     string
		c        *client
		query    string
		vars     map[string]any
		wantCode string // "" for no limit error
		wantCost int    // the reported cost, when not 0
	}{
		{"default page size", rd, `{ records { nodes { id } } }`, nil, "", graph.QueryRootCost + 20*2},
		{"first multiplies", rd, `{ records(first: 100) { nodes { id type scope } } }`, nil, "", graph.QueryRootCost + 100*4},
		{"first from a variable", rd, `query($n: Int) { records(first: $n) { nodes { id type scope } } }`, map[string]any{"n": 300}, "COMPLEXITY_LIMIT_EXCEEDED", graph.QueryRootCost + 300*4},
		{"nested connections multiply", rd, `{ records(first: 10) { nodes { relations(first: 50) { edges { cursor } } } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", graph.QueryRootCost + 10*(1+1+50*2)},
		{"lists without an argument count what the store may return", rd, `{ records(first: 5) { nodes { supersedes { id } } } }`, nil, "", graph.QueryRootCost + 5*(1+1+membrane.MaxNeighbors*1)},
		{"history counts a whole chain", rd, `{ records(first: 1) { nodes { history { id } } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", graph.QueryRootCost + 1*(1+1+membrane.MaxChain*1)},
		{"lineage by limit and depth", rd, `query($id: ID!) { lineage(id: $id, limit: 200, maxDepth: 10) { nodes { depth } } }`, map[string]any{"id": "x"}, "COMPLEXITY_LIMIT_EXCEEDED", graph.QueryRootCost + 200*2 + 10*200},
		{"small lineage", rd, `query($id: ID!) { lineage(id: $id, limit: 10, maxDepth: 2) { nodes { depth } } }`, map[string]any{"id": "x"}, "NOT_FOUND", graph.QueryRootCost + 10*2 + 2*10},
		{"retrieveGraph by node limit and hops", rd, `{ retrieveGraph(input: {nodeLimit: 200, maxHops: 5}) { nodes { hop } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", graph.QueryRootCost + 200*2 + 5*200},
		// In a scope of its own: an admin reading every scope would meet
		// other tests' records, some sealed with keys of their own.
		{"admins have their own limit", admin, `query($n: Int, $s: [String!]) { records(first: $n, filter: {scopes: $s}) { nodes { id type scope } } }`,
			map[string]any{"n": 300, "s": []string{neo4jtest.Scope(t)}}, "", graph.QueryRootCost + 300*4},
		{"too deep", rd, `{ records { nodes { relations { edges { node { id } } } } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"too deep through fragments", rd, `{ records { nodes { ...R } } } fragment R on Record { relations { ...E } } fragment E on RelationConnection { edges { node { id } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"admins may nest deeper", admin, `query($s: [String!]) { records(first: 1, filter: {scopes: $s}) { nodes { relations(first: 1) { edges { node { id } } } } } }`,
			map[string]any{"s": []string{neo4jtest.Scope(t)}}, "", 0},
		{"fragments expanded past the limit", admin, fanout.String(), nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"fragments expanded past the cap without a cost limit", wr, fanout.String(), nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"no limits", wr, `query($n: Int) { records(first: $n) { nodes { relations(first: 500) { edges { node { id } } } } } }`, map[string]any{"n": 500}, "", 0},
		{"too many tokens", admin, `{ records { nodes { ` + strings.Repeat("id ", 600) + `} } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"a selection set of the widest allowed", rd, `{ ` + strings.Repeat("__typename ", graph.MaxSelectionWidth) + `}`, nil, "", 0},
		{"a selection set too wide, of __typename alone", wr, `{ ` + strings.Repeat("__typename ", graph.MaxSelectionWidth+1) + `}`, nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"a selection set made too wide by fragments", rd, `{ records(first: 1) { nodes { ...W ...W } } } fragment W on Record { ` +
			strings.Repeat("__typename ", graph.MaxSelectionWidth/2) + `id }`, nil, "COMPLEXITY_LIMIT_EXCEEDED", 0},
		{"introspection is not costed", rd, `{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }`, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := admin.DB.TxCount()
			r := tt.c.Post(map[string]any{"query": tt.query, "variables": tt.vars})
			if got := r.Code(); got != tt.wantCode {
				t.Fatalf("code = %q, want %q: %s", got, tt.wantCode, r.Body)
			}
			if tt.wantCode == "COMPLEXITY_LIMIT_EXCEEDED" {
				if r.Status != http.StatusUnprocessableEntity {
					t.Fatalf("status = %d", r.Status)
				}
				if n := admin.DB.TxCount() - before; n != 0 {
					t.Fatalf("%d transactions ran", n)
				}
			}
			if tt.wantCost != 0 {
				cost, _ := r.Extensions["complexity"].(map[string]any)
				if cost["cost"] != float64(tt.wantCost) {
					t.Fatalf("extensions.complexity = %v, want cost %d", r.Extensions["complexity"], tt.wantCost)
				}
			}
		})
	}
}

// TestPageSizeLimit: a page over membrane.MaxPageSize is BAD_USER_INPUT,
// not a cost (page sizes are costed at most at the maximum), and runs no
// Cypher.
func TestPageSizeLimit(t *testing.T) {
	c := newClient(t)
	for _, q := range []string{
		`{ records(first: 501) { nodes { id } } }`,
		`{ auditLog(first: 100000) { nodes { id } } }`,
	} {
		t.Run(q, func(t *testing.T) {
			before := c.DB.TxCount()
			c.Fail("BAD_USER_INPUT", q, nil)
			if n := c.DB.TxCount() - before; n != 0 {
				t.Fatalf("%d transactions ran", n)
			}
		})
	}
}
