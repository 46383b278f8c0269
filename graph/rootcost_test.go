package graph_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// aliases is an operation selecting field n times under distinct aliases.
func aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

// TestRootFieldsAreCosted (issue 15): every root field runs Neo4j
// transactions of its own, so aliasing a cheap root field thousands of times
// must not pass as cheap. An operation with more root fields than the
// limit, or whose root fields' base costs exceed the cost limit, is refused
// with COMPLEXITY_LIMIT_EXCEEDED (HTTP 422) before any Cypher runs.
func TestRootFieldsAreCosted(t *testing.T) {
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{neo4jtest.Scope(t)}}
	writer := membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{neo4jtest.Scope(t)}}
	opts := membranehttp.DefaultHandlerOptions()
	// Readers get the defaults; writers have no root-field limit, so that
	// the cost alone is seen to refuse.
	opts.Limits[membrane.RoleWriter] = graph.QueryLimits{Complexity: membranehttp.DefaultMaxComplexity, Depth: membranehttp.DefaultMaxDepth}
	admin := newClientOpts(t, opts, reader, writer)
	// A store of the test's own, so that no other test's transactions are
	// counted.
	admin.DB = neo4jtest.Open(t)
	admin.URL = admin.Serve(func(w *gqltest.Wiring) { w.Stores.Metrics = admin.DB })
	rd, wr := admin.as(reader.Actor), admin.as(writer.Actor)
	// A cheap root field that runs (this server has no change feed, which
	// changeCursor needs) in a scope of the test's own.
	page := fmt.Sprintf("records(first: 1, filter: {scopes: [%q]}) { nodes { id } }", reader.Scopes[0])
	pageCost := graph.QueryRootCost + 1*(1+1)

	var fragments strings.Builder // 21 root fields through a fragment and an inline fragment
	fragments.WriteString("{ ...F ... on Query {")
	for i := range 11 {
		fmt.Fprintf(&fragments, " i%d: changeCursor", i)
	}
	fragments.WriteString(" } } fragment F on Query {")
	for i := range 10 {
		fmt.Fprintf(&fragments, " f%d: changeCursor", i)
	}
	fragments.WriteString(" }")

	tests := []struct {
		name    string
		c       *client
		query   string
		refused string // a part of the refusal's message; "" when the operation runs
		cost    int    // the reported cost, when not 0
	}{
		{"6,000 changeCursor aliases", rd, aliases(6000, "changeCursor"), "6000 root fields", 0},
		{"3,000 metrics aliases", rd, aliases(3000, "metrics { totalRecords }"), "3000 root fields", 0},
		{"21 root fields", rd, aliases(21, "changeCursor"), "exceeds the limit of 20 root fields", 0},
		{"fragments and inline fragments on the root count", rd, fragments.String(), "21 root fields", 0},
		// Without a root-field limit, thousands of aliases are refused for
		// the width of their selection set (graph.MaxSelectionWidth);
		// below it, for their cost.
		{"without a root-field limit, 6,000 changeCursor aliases are too wide", wr, aliases(6000, "changeCursor"), "selects 6000 fields", 0},
		{"without a root-field limit, 3,000 metrics aliases are too wide", wr, aliases(3000, "metrics { totalRecords }"), "selects 3000 fields", 0},
		{"without a root-field limit, 200 mutations cost 100,000", wr, "mutation " + aliases(200, `deleteRecord(id: "x") { id }`), "complexity", 0},
		{"without a root-field limit, 10 metrics cost 51,000", wr, aliases(10, "metrics { totalRecords }"), "complexity", 0},
		{"20 root fields run", rd, aliases(20, page), "", 20 * pageCost},
		// gqlgen runs one field per response key, but its cost walk counts
		// each repetition.
		{"one alias repeated is one root field", rd, "{" + strings.Repeat(" a: "+page, 30) + " }", "", 30 * pageCost},
		{"__typename is no root field", rd, aliases(30, "__typename"), "", 30},
		{"a normal query", rd, `{ metrics { totalRecords } records(first: 10) { nodes { id type } totalCount } }`, "", graph.QueryRootCost + graph.MetricsCost + graph.QueryRootCost + 10*(3+1)},
		{"nine metrics fit a reader's cost limit", rd, aliases(9, "metrics { totalRecords }"), "", 9 * (graph.QueryRootCost + graph.MetricsCost)},
		{"ten metrics do not", rd, aliases(10, "metrics { totalRecords }"), "complexity", 0},
		{"admins have a higher limit", admin, aliases(21, page), "", 21 * pageCost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := admin.DB.TxCount()
			r := tt.c.Post(map[string]any{"query": tt.query})
			if tt.refused == "" {
				if r.Code() != "" || r.Status != http.StatusOK {
					t.Fatalf("status %d: %.300s", r.Status, r.Body)
				}
				if tt.cost != 0 {
					if got := r.Extensions["complexity"].(map[string]any)["cost"]; got != float64(tt.cost) {
						t.Fatalf("cost = %v, want %d", got, tt.cost)
					}
				}
				return
			}
			if r.Status != http.StatusUnprocessableEntity || r.Code() != "COMPLEXITY_LIMIT_EXCEEDED" {
				t.Fatalf("status %d code %q, want 422 %s: %.300s", r.Status, r.Code(), "COMPLEXITY_LIMIT_EXCEEDED", r.Body)
			}
			if msg := r.Errors[0].Message; !strings.Contains(msg, tt.refused) {
				t.Fatalf("message %q does not say %q", msg, tt.refused)
			}
			if n := admin.DB.TxCount() - before; n != 0 {
				t.Fatalf("%d transactions ran for a refused operation", n)
			}
		})
	}
}

// TestMutationRootCost: a mutation's root field costs MutationRootCost in
// place of 1, a batch still pays per input.
func TestMutationRootCost(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	in := map[string]any{"type": "ENTITY", "scope": scope, "payload": map[string]any{"entity": map[string]any{"canonicalName": "x"}}}
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		cost  int
	}{
		{"createRecord", `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": in}, graph.MutationRootCost + 1},
		{"ingestBatch pays per input", `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`,
			map[string]any{"in": []any{in, in, in}}, graph.MutationRootCost + 3*1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Post(map[string]any{"query": tt.query, "variables": tt.vars})
			if r.Code() != "" {
				t.Fatalf("%s", r.Body)
			}
			if got := r.Extensions["complexity"].(map[string]any)["cost"]; got != float64(tt.cost) {
				t.Fatalf("cost = %v, want %d", got, tt.cost)
			}
		})
	}
}

// TestDocumentedQueriesFitReaderLimits: every operation in the graphql
// code blocks of the README and the docs stays within a reader's default
// limits (it may fail for other reasons: a reader cannot write, the scopes
// are not the reader's). The operations are read from the files, so a
// documented query that grows past the limits, or stops parsing, fails.
func TestDocumentedQueriesFitReaderLimits(t *testing.T) {
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{neo4jtest.Scope(t)}}
	rd := newClient(t, reader).as(reader.Actor)
	ops := 0
	for _, file := range []string{"../README.md", "../docs/operations.md", "../docs/retrieval.md", "../docs/data-model.md"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range graphqlBlocks(string(raw)) {
			doc, gerr := parser.ParseQuery(&ast.Source{Input: block})
			if gerr != nil {
				t.Fatalf("%s, graphql block %d does not parse: %v", file, i+1, gerr)
			}
			for j, op := range doc.Operations {
				end := len(block)
				if j+1 < len(doc.Operations) {
					end = doc.Operations[j+1].Position.Start
				}
				q := block[op.Position.Start:end]
				ops++
				t.Run(fmt.Sprintf("%s#%d.%d", strings.TrimPrefix(file, "../"), i+1, j+1), func(t *testing.T) {
					r := rd.Post(map[string]any{"query": q})
					if r.Status == http.StatusUnprocessableEntity || r.Code() == "COMPLEXITY_LIMIT_EXCEEDED" {
						t.Fatalf("refused: %.300s", r.Body)
					}
					// The limits are checked before anything runs: an
					// answer of the operation's own (data, or a resolver's
					// error: a subscription over POST on a server without
					// live updates) shows that it fit. Queries and
					// mutations also report their cost.
					if c, _ := r.Extensions["complexity"].(map[string]any); c != nil {
						if c["cost"].(float64) > c["limit"].(float64) {
							t.Fatalf("extensions.complexity = %v", c)
						}
						t.Logf("cost %v", c["cost"])
					} else if op.Operation != ast.Subscription {
						t.Fatalf("no extensions.complexity in %.300s", r.Body)
					}
				})
			}
		}
	}
	if ops < 5 {
		t.Fatalf("found %d documented operations, want the README's and docs' examples", ops)
	}
}

// graphqlBlocks returns the bodies of a Markdown text's ```graphql blocks.
func graphqlBlocks(md string) []string {
	var blocks []string
	for _, part := range strings.Split(md, "```graphql\n")[1:] {
		if end := strings.Index(part, "```"); end >= 0 {
			blocks = append(blocks, part[:end])
		}
	}
	return blocks
}
