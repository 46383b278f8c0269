package neo4j_test

import (
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// chainOrder walks the NEXT chain from first and returns the indexes of
// recs in chain order.
func chainOrder(t *testing.T, db *neo4j.DB, recs []*membrane.Record, first int) []int {
	t.Helper()
	index := map[string]int{}
	ids := make([]string, len(recs))
	for i, r := range recs {
		index[r.ID], ids[i] = i, r.ID
	}
	next, err := db.Neighbors(sysCtx(), ids, membrane.NeighborQuery{Predicates: []membrane.Predicate{membrane.PredNext},
		Direction: membrane.DirOut, Page: membrane.Page{First: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for id := recs[first].ID; id != ""; {
		out = append(out, index[id])
		if len(out) > len(recs) {
			t.Fatalf("NEXT cycle: %v", out)
		}
		var ns []*membrane.Neighbor
		if page := next[id]; page != nil {
			ns = page.Items
		}
		if len(ns) > 1 {
			t.Fatalf("record %d has %d next episodes", index[id], len(ns))
		}
		id = ""
		if len(ns) == 1 {
			id = ns[0].Record.ID
		}
	}
	return out
}

// TestSessionChainPruneRelinks: pruning episodes of a session (one, two
// next to each other, the first) joins the episodes around them, in the
// prune's transaction, and leaves the chain a line.
func TestSessionChainPruneRelinks(t *testing.T) {
	db := neo4jtest.DB(t)
	tests := []struct {
		name   string
		pruned []int
		want   []int
	}{
		{"the middle one", []int{2}, []int{0, 1, 3, 4}},
		{"two next to each other", []int{1, 2}, []int{0, 3, 4}},
		{"the first and the last", []int{0, 4}, []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			ins := make([]membrane.RecordInput, 5)
			for i := range ins {
				ins[i] = episode(scope, "s", i)
				ins[i].Lifecycle = &membrane.LifecycleInput{DeletionPolicy: ptr(membrane.DeleteNever)}
				if slices.Contains(tt.pruned, i) {
					// Prunable: a second's half-life.
					ins[i].Lifecycle = &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1)), DeletionPolicy: ptr(membrane.DeleteAutoPrune)}
				}
			}
			recs := neo4jtest.Create(t, db, t0, ins...)
			if got := chainOrder(t, db, recs, 0); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
				t.Fatalf("chain before pruning %v", got)
			}
			res, err := db.Prune(sysCtx(), membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(24 * time.Hour), Scopes: []string{scope}}})
			if err != nil || res.Changed != int64(len(tt.pruned)) {
				t.Fatalf("prune: %+v, %v; want %d deleted", res, err, len(tt.pruned))
			}
			var kept []*membrane.Record
			for i, r := range recs {
				if !slices.Contains(tt.pruned, i) {
					kept = append(kept, r)
				}
			}
			got := chainOrder(t, db, kept, 0)
			want := make([]int, len(tt.want))
			for i, w := range tt.want {
				want[i] = slices.Index(kept, recs[w])
			}
			if !slices.Equal(got, want) {
				t.Errorf("chain after pruning %v (indexes among the kept), want %v", got, want)
			}
			if v, err := db.CheckInvariants(sysCtx(), scope); err != nil || len(v) > 0 {
				t.Errorf("invariants: %v, %v", v, err)
			}
		})
	}
}
