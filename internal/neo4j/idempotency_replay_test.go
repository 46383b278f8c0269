package neo4j_test

import (
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestReplayEdgeToUnopenedRecord: a replay answers with the edges its key
// stored, and one whose other end no longer opens on the replaying server
// (sealed under a key it lacks) is shown as a read of relations shows it
// (the end redacted), not refused as a revision of that record would be
// (FAILED_PRECONDITION): the replay revises nothing.
func TestReplayEdgeToUnopenedRecord(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("rlost-"+suffix, 61)
	kept := neo4jtest.SealKey("rkept-"+suffix, 62)
	scope, first := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	src := sealedFact(t, first, scope, membrane.SensitivityLow, "replay-source", "is", "clear")
	tgt := sealedFact(t, first, scope, membrane.SensitivityHyper, "replay-target", "is", "sealed")
	ctx := sysCtx()
	key := "relate-" + suffix
	idem, err := membrane.NewIdempotency(&key, "addRelation", map[string]any{"a": src, "b": tgt})
	if err != nil {
		t.Fatal(err)
	}
	lock := []string{src, tgt}
	wrote, err := first.Revise(ctx, idem, lock, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Relate(locked[src], locked[tgt], membrane.PredSupports, nil, membrane.RevisionMeta{Actor: "test"}, time.Now())
	})
	if err != nil || len(wrote.Edges) != 1 {
		t.Fatalf("relate: %v %+v", err, wrote)
	}

	replaying := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	again, err := replaying.Revise(ctx, idem, lock, nil, func(_, _ map[string]*membrane.Record) (*membrane.Change, error) {
		t.Error("a replay planned again")
		return &membrane.Change{}, nil
	})
	if err != nil {
		t.Fatalf("replay on a server without the target's key: %v", err)
	}
	sameEdge := func(a, b membrane.Relation) bool {
		return a.CreatedAt.Equal(b.CreatedAt) && a.Predicate == b.Predicate && a.SourceID == b.SourceID &&
			a.TargetID == b.TargetID && a.Weight == b.Weight && a.Actor == b.Actor
	}
	if again.Record.ID != src || !slices.EqualFunc(again.Edges, wrote.Edges, sameEdge) {
		t.Fatalf("replayed %+v %+v, want the source and %+v", again.Record, again.Edges, wrote.Edges)
	}
}
