package neo4j_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestLineageWalk holds the lineage statement to a breadth-first search
// in Go over the same graph, with the trust rules of membrane.Trust: a
// walk expands only from records the request sees in full, reaches
// records it sees redacted (never past them) and never reaches invisible
// ones; each record comes at its shortest distance, ordered by depth then
// id, cut at the limit. The graph is random: 48 records of every
// sensitivity in the reader's scope and in another, and 110 relationships
// of the three lineage types and one other (supports), cycles and
// parallel paths included. Every record is a root, in every direction,
// with depths and limits that cut the walk, and with a subset of the
// types.
func TestLineageWalk(t *testing.T) {
	db := neo4jtest.Open(t)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	t.Cleanup(func() {
		_ = db.DeleteScope(context.Background(), scope)
		_ = db.DeleteScope(context.Background(), other)
	})
	svc, sys, fact := benchServices(t.Context(), db, scope)
	rng := rand.New(rand.NewPCG(13, 8))
	levels := []membrane.Sensitivity{membrane.SensitivityPublic, membrane.SensitivityLow, membrane.SensitivityMedium, membrane.SensitivityHigh, membrane.SensitivityHyper}
	type node struct {
		level int
		scope string
	}
	nodes := map[string]node{}
	var ids []string
	var batch []*membrane.RecordInput
	for i := range 48 {
		in := fact(fmt.Sprint("walk-", i))
		in.Sensitivity = &levels[rng.IntN(len(levels))]
		if i%6 == 5 {
			in.Scope = &other
		}
		batch = append(batch, &in)
	}
	recs, err := svc.Ingest.CreateRecords(sys, batch, ptr("test"), nil, "inputs")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		nodes[r.ID] = node{r.Sensitivity.Level(), r.Scope}
		ids = append(ids, r.ID)
	}
	type edge struct{ from, to, typ string }
	var edges []edge
	types := []string{"SUPERSEDES", "DERIVED_FROM", "CONTESTED_BY", "SUPPORTS"}
	for range 110 {
		a, b := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
		if a != b {
			edges = append(edges, edge{a, b, types[rng.IntN(len(types))]})
		}
	}
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	rows := make([]map[string]any, len(edges))
	for i, e := range edges {
		rows[i] = map[string]any{"from": e.from, "to": e.to, "type": e.typ}
	}
	if _, err := driver.ExecuteQuery(t.Context(), d, `UNWIND $rows AS e
		MATCH (a:Memory {id: e.from}), (b:Memory {id: e.to})
		CREATE (a)-[r:$(e.type)]->(b) SET r.createdAt = datetime(), r.weight = 1.0, r.actor = 'test'`,
		map[string]any{"rows": rows}, driver.EagerResultTransformer,
		driver.ExecuteQueryWithDatabase(cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j"))); err != nil {
		t.Fatal(err)
	}

	trust := membrane.Trust{Principal: membrane.Principal{Actor: "walker", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}},
		Ceiling: membrane.SensitivityLow.Level(), Scopes: []string{scope}}
	ctx := membrane.NewContextWithTrust(t.Context(), trust)
	// want is the lineage by breadth-first search: "id:depth" in the
	// statement's order, and whether the limit cut it.
	want := func(root string, dir membrane.Direction, preds []membrane.Predicate, maxDepth, limit int) ([]string, bool) {
		if trust.VisibilityOf(nodes[root].level, nodes[root].scope) == membrane.Invisible {
			return nil, false
		}
		allowed := map[string]bool{}
		for _, p := range preds {
			allowed[p.RelType()] = true
		}
		next := func(a string) []string {
			var out []string
			for _, e := range edges {
				if !allowed[e.typ] {
					continue
				}
				if e.from == a && dir != membrane.DirIn {
					out = append(out, e.to)
				}
				if e.to == a && dir != membrane.DirOut {
					out = append(out, e.from)
				}
			}
			return out
		}
		dist := map[string]int{root: 0}
		queue := []string{root}
		for len(queue) > 0 {
			a := queue[0]
			queue = queue[1:]
			if trust.VisibilityOf(nodes[a].level, nodes[a].scope) != membrane.Visible || dist[a] == maxDepth {
				continue
			}
			for _, b := range next(a) {
				if _, seen := dist[b]; seen || trust.VisibilityOf(nodes[b].level, nodes[b].scope) == membrane.Invisible {
					continue
				}
				dist[b] = dist[a] + 1
				queue = append(queue, b)
			}
		}
		var others []string
		for id := range dist {
			if id != root {
				others = append(others, id)
			}
		}
		slices.SortFunc(others, func(x, y string) int { return cmp.Or(cmp.Compare(dist[x], dist[y]), strings.Compare(x, y)) })
		cut := len(others) > limit
		if cut {
			others = others[:limit]
		}
		out := []string{root + ":0"}
		for _, id := range others {
			out = append(out, fmt.Sprint(id, ":", dist[id]))
		}
		return out, cut
	}
	cases, expanded, redacted := 0, 0, 0
	for _, root := range ids {
		for _, dir := range []membrane.Direction{membrane.DirOut, membrane.DirIn, membrane.DirBoth} {
			for _, c := range []struct {
				preds           []membrane.Predicate
				maxDepth, limit int
			}{
				{membrane.LineagePredicates, 100, 200},
				{membrane.LineagePredicates, 2, 200},
				{membrane.LineagePredicates, 100, 3},
				{[]membrane.Predicate{membrane.PredSupersedes, membrane.PredContestedBy}, 5, 200},
			} {
				q, err := membrane.NewLineageQuery(&dir, c.preds, ptr(int64(c.maxDepth)), ptr(int64(c.limit)), nil)
				if err != nil {
					t.Fatal(err)
				}
				wantNodes, wantCut := want(root, dir, c.preds, c.maxDepth, c.limit)
				l, err := db.Lineage(ctx, root, q)
				if wantNodes == nil {
					if membrane.ErrorCode(err) != membrane.ENOTFOUND {
						t.Fatalf("lineage of invisible %s: %v, %v", root, l, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, n := range l.Nodes {
					got = append(got, fmt.Sprint(n.Record.ID, ":", n.Depth))
					if n.Record.Redacted {
						redacted++
					}
				}
				if !slices.Equal(got, wantNodes) || l.Truncated != wantCut {
					t.Fatalf("lineage of %s %s %+v:\n got %v (truncated %t)\nwant %v (truncated %t)", root, dir, c, got, l.Truncated, wantNodes, wantCut)
				}
				shown := map[string]bool{}
				for _, n := range l.Nodes {
					shown[n.Record.ID] = !n.Record.Redacted
				}
				var wantEdges, gotEdges []string
				for _, e := range edges {
					full, inA := shown[e.from]
					fullB, inB := shown[e.to]
					if inA && inB && (full || fullB) && slices.Contains(c.preds, membrane.PredicateOfRelType(e.typ)) {
						wantEdges = append(wantEdges, e.from+">"+e.to+":"+e.typ)
					}
				}
				for _, e := range l.Edges {
					gotEdges = append(gotEdges, e.SourceID+">"+e.TargetID+":"+strings.ToUpper(string(e.Predicate)))
				}
				slices.Sort(wantEdges)
				slices.Sort(gotEdges)
				if !slices.Equal(gotEdges, wantEdges) {
					t.Fatalf("edges of the lineage of %s %s %+v:\n got %v\nwant %v", root, dir, c, gotEdges, wantEdges)
				}
				cases++
				if len(got) > 3 {
					expanded++
				}
			}
		}
	}
	// The data must exercise what the walk decides: long walks, redacted
	// ends, invisible records in the way.
	if cases < 200 || expanded < 40 || redacted < 40 {
		t.Fatalf("the graph exercises too little: %d lineages, %d with more than 3 records, %d redacted records shown", cases, expanded, redacted)
	}
	t.Logf("%d lineages compared, %d with more than 3 records, %d redacted records shown", cases, expanded, redacted)
}
