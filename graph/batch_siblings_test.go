package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestBatchFieldsOfHeldRecords: Record's batch fields (lineage, relations,
// audit, provenance) run one transaction per field for a whole list of
// records, also when each record is held by a field of a list element (a
// connection's edges[i].node, retrieve's hits[i].record, lineage's
// nodes[i].record), where gqlgen alone resolved them record by record: a
// page of n records then ran n transactions per selected field.
func TestBatchFieldsOfHeldRecords(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c, counter := countingClient(t)

	const n = 8
	topic := "batched" + word()
	root := c.Create(scope, "SEMANTIC", gqltest.Fact(topic+" root"), nil)
	for range n - 1 {
		id := c.Create(scope, "SEMANTIC", gqltest.Fact(topic+" leaf "+word()), nil)
		c.Do(`mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: $b) { predicate } }`,
			map[string]any{"a": root, "b": id}, nil)
	}
	if err := c.DB.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Every batch field of Record, each one transaction at the most for
	// a list; the records the relations lead to select only their id.
	const fields = `id supersedes { id } supersededBy { id } derivedFrom { id } derivatives { id } contestedBy { id }
		contests { id } current { id } history { id } provenance { createdBy } auditLog { nodes { action } }
		relations(first: 20) { edges { node { id } } }`
	const batchFields = 12
	tests := []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{"records edges node", `query($s: [String!]) { records(filter: {scopes: $s}, first: 20) { edges { node { F } } } }`,
			map[string]any{"s": []any{scope}}},
		{"records nodes", `query($s: [String!]) { records(filter: {scopes: $s}, first: 20) { nodes { F } } }`,
			map[string]any{"s": []any{scope}}},
		{"relations edges node", `query($id: ID!) { record(id: $id) { relations(first: 20) { edges { node { F } } } } }`,
			map[string]any{"id": root}},
		{"lineage nodes record", `query($id: ID!) { lineage(id: $id, direction: BOTH, predicates: [SUPPORTS]) { nodes { record { F } } } }`,
			map[string]any{"id": root}},
		{"retrieve hits record", `query($in: RetrieveInput!) { retrieve(input: $in) { hits { record { F } } } }`,
			map[string]any{"in": map[string]any{"query": topic, "scopes": []any{scope}, "limit": 20}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := counter.n.Load()
			var out json.RawMessage
			c.Do(strings.ReplaceAll(tt.query, "F", fields), tt.vars, &out)
			ran := counter.n.Load() - before
			// The answer holds the records it is about (n, or n-1 for the
			// root's relations), each with its own relations.
			if got := strings.Count(string(out), `"supersedes"`); got < n-1 {
				t.Fatalf("%d records in the answer, want at least %d: %.500s", got, n-1, out)
			}
			// The root field's own reads, then one per batch field.
			if limit := int64(batchFields + 3); ran > limit {
				t.Fatalf("%d transactions for %d records, want at most %d (one per batch field)", ran, n, limit)
			}
		})
	}
}
