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

// TestLineageWalk holds the lineage and graph statements to a
// breadth-first search in Go over the same graph, with the trust rules of
// membrane.Trust: a walk expands only from records the request sees in
// full, reaches records it sees redacted (never past them) and never
// reaches invisible ones; each record comes at its shortest distance from
// the nearest root, ordered by depth then id, cut at the limit. The graph
// is random: 48 records of every sensitivity in the reader's scope and in
// another, and 110 relationships of the three lineage types and one other
// (supports), cycles and parallel paths included. Every record is a
// lineage root, in every direction, with depths and limits that cut the
// walk, and with a subset of the types; graphs start from random sets of
// one to four roots.
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
	// want is the walk from roots by breadth-first search: "id:depth" in
	// the statements' order (the roots by id, then the others by depth and
	// id), the others cut at limit, and whether the limit cut them; nil
	// when a root is invisible.
	want := func(roots []string, dir membrane.Direction, preds []membrane.Predicate, maxDepth, limit int) ([]string, bool) {
		for _, root := range roots {
			if trust.VisibilityOf(nodes[root].level, nodes[root].scope) == membrane.Invisible {
				return nil, false
			}
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
		dist := map[string]int{}
		for _, root := range roots {
			dist[root] = 0
		}
		queue := slices.Clone(roots)
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
		for id, d := range dist {
			if d > 0 {
				others = append(others, id)
			}
		}
		slices.SortFunc(others, func(x, y string) int { return cmp.Or(cmp.Compare(dist[x], dist[y]), strings.Compare(x, y)) })
		cut := len(others) > limit
		if cut {
			others = others[:limit]
		}
		var out []string
		for _, root := range slices.Sorted(slices.Values(roots)) {
			out = append(out, root+":0")
		}
		for _, id := range others {
			out = append(out, fmt.Sprint(id, ":", dist[id]))
		}
		return out, cut
	}
	cases, expanded, redacted := 0, 0, 0
	ids2 := func(nodes []*membrane.LineageNode) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, fmt.Sprint(n.Record.ID, ":", n.Depth))
		}
		return out
	}
	// edgesAmong is "from>to:TYPE" of every relationship of preds among
	// the records of ids ("id:depth") with one end seen in full, sorted.
	edgesAmong := func(ids []string, preds []membrane.Predicate) []string {
		in := map[string]bool{}
		for _, id := range ids {
			id, _, _ = strings.Cut(id, ":")
			in[id] = true
		}
		full := func(id string) bool { return trust.VisibilityOf(nodes[id].level, nodes[id].scope) == membrane.Visible }
		var out []string
		for _, e := range edges {
			if in[e.from] && in[e.to] && (full(e.from) || full(e.to)) && slices.Contains(preds, membrane.PredicateOfRelType(e.typ)) {
				out = append(out, e.from+">"+e.to+":"+e.typ)
			}
		}
		slices.Sort(out)
		return out
	}
	// check compares what a statement returned with the search's answer.
	check := func(what string, l *membrane.Lineage, wantNodes []string, wantCut bool, wantEdges []string) {
		t.Helper()
		got := ids2(l.Nodes)
		if !slices.Equal(got, wantNodes) || l.Truncated != wantCut {
			t.Fatalf("%s:\n got %v (truncated %t)\nwant %v (truncated %t)", what, got, l.Truncated, wantNodes, wantCut)
		}
		if wantEdges != nil {
			var gotEdges []string
			for _, e := range l.Edges {
				gotEdges = append(gotEdges, e.SourceID+">"+e.TargetID+":"+strings.ToUpper(string(e.Predicate)))
			}
			slices.Sort(gotEdges)
			if !slices.Equal(gotEdges, wantEdges) {
				t.Fatalf("edges of %s:\n got %v\nwant %v", what, gotEdges, wantEdges)
			}
		}
		for _, n := range l.Nodes {
			if n.Record.Redacted {
				redacted++
			}
		}
		cases++
		if len(got) > 3 {
			expanded++
		}
	}
	dirs := []membrane.Direction{membrane.DirOut, membrane.DirIn, membrane.DirBoth}
	// walkCase is one walk asked of a root set: the predicates, the depth
	// (a lineage's maxDepth, a graph's hops) and the limit.
	type walkCase struct {
		preds        []membrane.Predicate
		depth, limit int
	}
	for _, root := range ids {
		for _, dir := range dirs {
			for _, c := range []walkCase{
				{membrane.LineagePredicates, 100, 200},
				{membrane.LineagePredicates, 2, 200},
				{membrane.LineagePredicates, 100, 3},
				{[]membrane.Predicate{membrane.PredSupersedes, membrane.PredContestedBy}, 5, 200},
			} {
				q, err := membrane.NewLineageQuery(&dir, c.preds, ptr(int64(c.depth)), ptr(int64(c.limit)), nil)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("lineage of %s %s %+v", root, dir, c)
				wantNodes, wantCut := want([]string{root}, dir, c.preds, c.depth, c.limit)
				l, err := db.Lineage(ctx, root, q)
				if wantNodes == nil {
					if membrane.ErrorCode(err) != membrane.ENOTFOUND {
						t.Fatalf("%s, invisible: %v, %v", what, l, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				check(what, l, wantNodes, wantCut, edgesAmong(wantNodes, c.preds))
			}
		}
	}
	lineages := cases
	// Graphs: random sets of one to four roots the reader sees (an
	// invisible root answers NOT_FOUND, as lineages show); the limit
	// counts the roots; more edges than the edge limit among the records
	// the statement reads also cut the graph (then its edges are not
	// compared).
	var seen []string
	for _, id := range ids {
		if trust.VisibilityOf(nodes[id].level, nodes[id].scope) != membrane.Invisible {
			seen = append(seen, id)
		}
	}
	for i := range 16 {
		roots := make([]string, 1+i%4)
		for j, k := range rng.Perm(len(seen))[:len(roots)] {
			roots[j] = seen[k]
		}
		for _, dir := range dirs {
			for _, c := range []walkCase{
				{membrane.Predicates, 2, 500},
				{membrane.Predicates, 10, 500},
				{membrane.LineagePredicates, 3, len(roots) + 2},
				{[]membrane.Predicate{membrane.PredSupports, membrane.PredDerivedFrom}, 4, 500},
			} {
				q, err := membrane.NewExportQuery(roots, ptr(int64(c.depth)), c.preds, &dir, ptr(int64(c.limit)), nil)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("graph of %v %s %+v", roots, dir, c)
				all, _ := want(roots, dir, c.preds, c.depth, 1<<30)
				g, err := db.Graph(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				read := all[:min(len(all), c.limit+1)]
				edgeCut := len(edgesAmong(read, c.preds)) > q.EdgeLimit()
				kept := all[:min(len(all), c.limit)]
				wantEdges := edgesAmong(kept, c.preds)
				if edgeCut {
					wantEdges = nil
				}
				check(what, g, kept, len(all) > c.limit || edgeCut, wantEdges)
			}
		}
	}
	// The data must exercise what the walk decides: long walks, redacted
	// ends, invisible records in the way.
	if lineages < 200 || cases-lineages < 150 || expanded < 80 || redacted < 80 {
		t.Fatalf("the graph exercises too little: %d lineages and %d graphs, %d with more than 3 records, %d redacted records shown", lineages, cases-lineages, expanded, redacted)
	}
	t.Logf("%d lineages and %d graphs compared, %d with more than 3 records, %d redacted records shown", lineages, cases-lineages, expanded, redacted)
}
