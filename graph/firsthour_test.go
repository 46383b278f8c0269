package graph_test

import (
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestContestReference: a contesting reference of the form of a record id
// must name a record the caller sees (a mistyped id was kept as external
// evidence); anything else is external evidence, as before.
func TestContestReference(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	q := `mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref) { status contestEvidence contestedBy { id } } }`
	type contested struct {
		Contest struct {
			Status          string
			ContestEvidence []string
			ContestedBy     []struct{ ID string }
		}
	}
	t.Run("a mistyped record id", func(t *testing.T) {
		target := c.Create(scope, "SEMANTIC", gqltest.Fact("mistyped"), nil)
		before := c.snapshot(scope)
		ref := membrane.NewID()
		errs := c.Fail("NOT_FOUND", q, map[string]any{"id": target, "ref": ref})
		if want := `record "` + ref + `" not found`; errs[0].Message != want {
			t.Fatalf("message %q, want %q", errs[0].Message, want)
		}
		if c.snapshot(scope) != before {
			t.Fatal("a refused contest changed the database")
		}
	})
	for _, ref := range []string{"https://tickets.example/42", "ticket-42", "not-a-uuid-0000-0000-0000-000000000000"} {
		t.Run("external "+ref, func(t *testing.T) {
			target := c.Create(scope, "SEMANTIC", gqltest.Fact("ext"), nil)
			var got contested
			c.Do(q, map[string]any{"id": target, "ref": ref}, &got)
			if got.Contest.Status != "CONTESTED" || len(got.Contest.ContestEvidence) != 1 || got.Contest.ContestEvidence[0] != ref || len(got.Contest.ContestedBy) != 0 {
				t.Fatalf("contest = %+v", got.Contest)
			}
		})
	}
	t.Run("a record", func(t *testing.T) {
		target, by := c.Create(scope, "SEMANTIC", gqltest.Fact("t"), nil), c.Create(scope, "SEMANTIC", gqltest.Fact("by"), nil)
		var got contested
		c.Do(q, map[string]any{"id": target, "ref": by}, &got)
		if len(got.Contest.ContestedBy) != 1 || got.Contest.ContestedBy[0].ID != by || len(got.Contest.ContestEvidence) != 0 {
			t.Fatalf("contest = %+v", got.Contest)
		}
	})
}

// TestProvenanceCreatedBy: a record created or revised without a
// provenance creator is created by the principal (it was ""); one that
// names its creator keeps it.
func TestProvenanceCreatedBy(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	createdBy := func(id string) string {
		t.Helper()
		var out struct {
			Record struct{ Provenance struct{ CreatedBy string } }
		}
		c.Do(`query($id: ID!) { record(id: $id) { provenance { createdBy } } }`, map[string]any{"id": id}, &out)
		return out.Record.Provenance.CreatedBy
	}
	created := c.Create(scope, "SEMANTIC", gqltest.Fact("cb"), nil)
	named := c.Create(scope, "SEMANTIC", gqltest.Fact("named"), map[string]any{
		"provenance": map[string]any{"createdBy": "importer", "sources": []any{map[string]any{"kind": "EVENT", "ref": "seed"}}}})
	var sup struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, map[string]any{"old": created, "in": factInput(scope, "cb2")}, &sup)
	var fork struct{ Fork struct{ ID string } }
	c.Do(`mutation($src: ID!, $in: RecordInput!) { fork(sourceId: $src, newRecord: $in) { id } }`, map[string]any{"src": named, "in": factInput(scope, "f")}, &fork)
	for _, tt := range []struct{ name, id, want string }{
		{"createRecord", created, c.Actor},
		{"createRecord naming its creator", named, "importer"},
		{"supersede", sup.Supersede.ID, c.Actor},
		{"fork", fork.Fork.ID, c.Actor},
	} {
		if got := createdBy(tt.id); got != tt.want {
			t.Errorf("%s: provenance.createdBy %q, want %q", tt.name, got, tt.want)
		}
	}
}
