package graph_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestProvenanceRefsGated: a record's provenance sources that name other
// records (as supersede successors did before audit references, and
// merges copied) are shown only when the caller may see the record named,
// on every read path, whether it still exists or was deleted.
func TestProvenanceRefsGated(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
	low := membrane.Principal{Actor: "low-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	c := newClientWith(t, func(w *gqltest.Wiring) { w.Stores.Deletes = w.DB }, low)
	rec := func(sc, sens string) string {
		return c.Create(sc, "SEMANTIC", gqltest.Fact(sens+" "+membrane.NewID()), map[string]any{"sensitivity": sens})
	}
	visible, medium, hyper, gone, elsewhere := rec(scope, "LOW"), rec(scope, "MEDIUM"), rec(scope, "HYPER"), rec(scope, "HYPER"), rec(other, "LOW")
	c.Do(`mutation($id: ID!) { deleteRecord(id: $id, rationale: "gone") { id } }`, map[string]any{"id": gone}, nil)

	refs := []string{"seed", visible, medium, hyper, gone, elsewhere}
	var sources []any
	for _, r := range refs {
		sources = append(sources, map[string]any{"kind": "EVENT", "ref": r})
	}
	succ := c.Create(scope, "SEMANTIC", gqltest.Fact("successor"), map[string]any{"sensitivity": "LOW",
		"provenance": map[string]any{"sources": sources}})

	type prov struct {
		ID         string
		Provenance *struct{ Sources []struct{ Ref string } }
	}
	shown := func(p prov) []string {
		var out []string
		if p.Provenance != nil {
			for _, s := range p.Provenance.Sources {
				out = append(out, s.Ref)
			}
		}
		return out
	}
	const sel = `id provenance { sources { ref } }`
	for _, tc := range []struct {
		name   string
		caller *client
		want   []string
	}{
		{"admin sees every source", c, refs},
		// A redacted record shows its id, as relations show it.
		{"low reader: no hidden, deleted or out-of-scope record", c.as(low.Actor), []string{"seed", visible, medium}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var one struct{ Record prov }
			tc.caller.Do(`query($id: ID!) { record(id: $id) { `+sel+` } }`, map[string]any{"id": succ}, &one)
			if got := shown(one.Record); !slices.Equal(got, tc.want) {
				t.Fatalf("record: sources %v, want %v", got, tc.want)
			}
			var page struct {
				Records struct{ Nodes []prov }
			}
			tc.caller.Do(`query($s: [String!]) { records(filter: {scopes: $s, sensitivities: [LOW]}, first: 100) { nodes { `+sel+` } } }`,
				map[string]any{"s": []string{scope}}, &page)
			found := false
			for _, n := range page.Records.Nodes {
				if n.ID == succ {
					found = true
					if got := shown(n); !slices.Equal(got, tc.want) {
						t.Fatalf("records: sources %v, want %v", got, tc.want)
					}
				}
			}
			if !found {
				t.Fatal("records: the successor is missing")
			}
		})
	}
}
