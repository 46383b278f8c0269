package neo4j_test

import (
	"context"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestSupersededStatusMigration: records a supersede retired before
// superseded had its own status (stored 'retracted', with an incoming
// SUPERSEDES edge) become 'superseded' when the schema is migrated, their
// version and audit trail as they were; a retraction stays retracted, and
// migrating again changes nothing. The migration's statement runs over this
// test's scope (OnceIn): deleting the shared Migration node to run it
// through Migrate would let any process starting meanwhile find it due.
func TestSupersededStatusMigration(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	p := membrane.DefaultPolicy()
	meta := membrane.RevisionMeta{Actor: "test"}
	recs := create(t, db, t0, fact(scope, "old", 1, nil), fact(scope, "withdrawn", 1, nil))
	old, withdrawn := recs[0], recs[1]
	at := t0.Add(time.Minute)
	revise(t, db, []string{old.ID}, func(locked map[string]*membrane.Record) (*membrane.Change, error) {
		return p.Supersede(locked[old.ID], fact(scope, "new", 1, nil), meta, at)
	})
	revise(t, db, []string{withdrawn.ID}, func(locked map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Retract(locked[withdrawn.ID], meta, at)
	})
	state := func() map[string][3]any {
		t.Helper()
		out := map[string][3]any{}
		for _, r := range raw(t, `MATCH (m:Memory {scope: $scope}) RETURN m.id, m.status, m.version, COUNT { (m)-[:HAS_AUDIT]->() }`, map[string]any{"scope": scope}) {
			out[r.Values[0].(string)] = [3]any{r.Values[1], r.Values[2], r.Values[3]}
		}
		return out
	}
	if got := state()[old.ID][0]; got != "superseded" {
		t.Fatalf("a supersede stores status %v, want superseded", got)
	}
	// The database as an earlier version left it: the superseded record
	// retracted.
	raw(t, `MATCH (m:Memory {id: $id}) SET m.status = 'retracted'`, map[string]any{"id": old.ID})
	before := state()
	for range 2 {
		if err := db.OnceIn(context.Background(), "superseded_status", []string{scope}); err != nil {
			t.Fatal(err)
		}
		after := state()
		for id, b := range before {
			want := b
			if id == old.ID {
				want[0] = "superseded"
			}
			if after[id] != want {
				t.Errorf("record %s after the migration: (status, version, audit entries) %v, want %v", id, after[id], want)
			}
		}
	}
	if got := state()[withdrawn.ID][0]; got != "retracted" {
		t.Fatalf("a retraction became %v", got)
	}
}
