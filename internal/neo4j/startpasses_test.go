package neo4j_test

import (
	"fmt"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestStartUpPassesReachEveryScope: the start-up passes that take a scope
// list run over every scope when it is nil, as a start runs them. The Go
// driver sends a nil slice as an empty list, not null, and `$scopes IS NULL
// OR m.scope IN $scopes` matches nothing for an empty list: the seal repair
// and the caption backfill did nothing at start-up (their tests ran them
// over a scope only).
//
// These are the whole-database runs a start makes when they are due. They
// touch only what needs them (a record at a sealed level stored in clear,
// a node without a caption), which the shared database holds only as
// other tests' fixtures, and leave those as the fixtures' own passes do.
func TestStartUpPassesReachEveryScope(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	t.Run("seal repair", func(t *testing.T) {
		id := sealedFact(t, db, scope, membrane.SensitivityMedium, "beacon", "marks", "hidden reefs")
		// What an earlier server left: the level raised, the text in clear.
		raw(t, `MATCH (m:Memory {id: $id}) SET m.sensitivity = 'high', m.sensitivityLevel = 3, m.encrypted = true`, map[string]any{"id": id})
		if _, err := db.RepairSealingIn(t.Context(), membrane.SensitivityHigh.Level(), nil); err != nil {
			t.Fatal(err)
		}
		if p := nodeProps(t, id); !membrane.IsSealed(fmt.Sprint(p["payload"])) {
			t.Fatalf("after the start-up repair: payload %v in clear", p["payload"])
		}
	})
	t.Run("captions", func(t *testing.T) {
		id := sealedFact(t, db, scope, membrane.SensitivityLow, "ferry", "crosses", "the bay")
		want, _ := captions(t, id)
		raw(t, `MATCH (m:Memory {id: $id}) REMOVE m.caption`, map[string]any{"id": id})
		if err := db.CaptionsIn(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := captions(t, id); got != want || got == "" {
			t.Fatalf("after the start-up backfill: caption %q, want %q", got, want)
		}
	})
}
