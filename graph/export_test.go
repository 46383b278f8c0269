package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// graphSel selects everything a graph view draws.
const graphSel = `{ truncated nodes { depth record { id caption redacted type } } edges { id predicate sourceId targetId weight } }`

type graphResult struct {
	Graph struct {
		Truncated bool
		Nodes     []struct {
			Depth  int
			Record struct {
				ID, Caption, Type string
				Redacted          bool
			}
		}
		Edges []struct {
			ID, Predicate, SourceID, TargetID string
			Weight                            float64
		}
	}
}

// nodes lists the nodes as "name:depth" (names by id from names),
// sorted, with ":redacted" on redacted ones.
func (g graphResult) nodes(names map[string]string) string {
	var out []string
	for _, n := range g.Graph.Nodes {
		s := fmt.Sprintf("%s:%d", names[n.Record.ID], n.Depth)
		if n.Record.Redacted {
			s += ":redacted"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// edges lists the edges as "source-PREDICATE->target", sorted.
func (g graphResult) edges(names map[string]string) string {
	var out []string
	for _, e := range g.Graph.Edges {
		out = append(out, names[e.SourceID]+"-"+e.Predicate+"->"+names[e.TargetID])
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func relate(c *client, s, pred, t string) {
	c.T.Helper()
	c.Do(`mutation($s: ID!, $p: RelationPredicate!, $t: ID!) { addRelation(sourceId: $s, predicate: $p, targetId: $t, rationale: "seed") { sourceId } }`,
		map[string]any{"s": s, "p": pred, "t": t}, nil)
}

func TestGraphQuery(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	// r0 -RELATED_TO-> r1 -RELATED_TO-> r2 -RELATED_TO-> r3, r4 -SUPPORTS-> r0,
	// and r5 supersedes r4.
	names, ids := map[string]string{}, map[string]string{}
	for i := range 5 {
		n := fmt.Sprintf("r%d", i)
		ids[n] = c.Create(scope, "SEMANTIC", gqltest.Fact(n), nil)
		names[ids[n]] = n
	}
	relate(c, ids["r0"], "RELATED_TO", ids["r1"])
	relate(c, ids["r1"], "RELATED_TO", ids["r2"])
	relate(c, ids["r2"], "RELATED_TO", ids["r3"])
	relate(c, ids["r4"], "SUPPORTS", ids["r0"])
	var sup struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, map[string]any{"old": ids["r4"], "in": factInput(scope, "r5")}, &sup)
	ids["r5"], names[sup.Supersede.ID] = sup.Supersede.ID, "r5"

	q := `query($roots: [ID!]!, $hops: Int, $p: [RelationPredicate!], $d: RelationDirection, $limit: Int) {
	  graph(roots: $roots, hops: $hops, predicates: $p, direction: $d, limit: $limit) ` + graphSel + ` }`
	for _, tc := range []struct {
		name      string
		roots     []string
		vars      map[string]any
		nodes     string
		edges     string
		truncated bool
	}{
		{"defaults: both directions, every predicate, 2 hops", []string{"r0"}, nil,
			"r0:0 r1:1 r2:2 r4:1 r5:2", "r0-RELATED_TO->r1 r1-RELATED_TO->r2 r4-SUPPORTS->r0 r5-SUPERSEDES->r4", false},
		{"one hop", []string{"r0"}, map[string]any{"hops": 1},
			"r0:0 r1:1 r4:1", "r0-RELATED_TO->r1 r4-SUPPORTS->r0", false},
		{"out", []string{"r0"}, map[string]any{"d": "OUT", "hops": 10},
			"r0:0 r1:1 r2:2 r3:3", "r0-RELATED_TO->r1 r1-RELATED_TO->r2 r2-RELATED_TO->r3", false},
		{"in", []string{"r0"}, map[string]any{"d": "IN", "hops": 10},
			"r0:0 r4:1 r5:2", "r4-SUPPORTS->r0 r5-SUPERSEDES->r4", false},
		{"predicates", []string{"r0"}, map[string]any{"p": []string{"SUPPORTS", "SUPERSEDES"}, "hops": 10},
			"r0:0 r4:1 r5:2", "r4-SUPPORTS->r0 r5-SUPERSEDES->r4", false},
		{"two roots, depth from the nearest", []string{"r0", "r3"}, map[string]any{"hops": 1},
			"r0:0 r1:1 r2:1 r3:0 r4:1", "r0-RELATED_TO->r1 r1-RELATED_TO->r2 r2-RELATED_TO->r3 r4-SUPPORTS->r0", false},
		{"a root twice counts once", []string{"r3", "r3"}, map[string]any{"hops": 1, "limit": 2},
			"r2:1 r3:0", "r2-RELATED_TO->r3", false},
		{"limit cuts the farthest nodes and their edges", []string{"r0"}, map[string]any{"limit": 3},
			"r0:0 r1:1 r4:1", "r0-RELATED_TO->r1 r4-SUPPORTS->r0", true},
		{"limit of the roots alone", []string{"r0", "r1"}, map[string]any{"limit": 2},
			"r0:0 r1:0", "r0-RELATED_TO->r1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{}
			for k, v := range tc.vars {
				vars[k] = v
			}
			var roots []string
			for _, r := range tc.roots {
				roots = append(roots, ids[r])
			}
			vars["roots"] = roots
			var g graphResult
			c.Do(q, vars, &g)
			if got := g.nodes(names); got != tc.nodes {
				t.Errorf("nodes = %s, want %s", got, tc.nodes)
			}
			if got := g.edges(names); got != tc.edges {
				t.Errorf("edges = %s, want %s", got, tc.edges)
			}
			if g.Graph.Truncated != tc.truncated {
				t.Errorf("truncated = %v, want %v", g.Graph.Truncated, tc.truncated)
			}
		})
	}
}

func TestGraphQueryBounds(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	id := c.Create(scope, "SEMANTIC", gqltest.Fact("bounds"), nil)
	q := `query($roots: [ID!]!, $hops: Int, $limit: Int) { graph(roots: $roots, hops: $hops, limit: $limit) { truncated } }`
	many := make([]string, membrane.MaxGraphRoots+1)
	for i := range many {
		many[i] = fmt.Sprintf("%s-%d", id, i)
	}
	for _, tc := range []struct {
		name string
		vars map[string]any
	}{
		{"no roots", map[string]any{"roots": []string{}}},
		{"empty root", map[string]any{"roots": []string{""}}},
		{"too many roots", map[string]any{"roots": many, "limit": membrane.MaxGraphLimit}},
		{"hops 0", map[string]any{"roots": []string{id}, "hops": 0}},
		{"hops 11", map[string]any{"roots": []string{id}, "hops": membrane.MaxGraphHops + 1}},
		{"limit 0", map[string]any{"roots": []string{id}, "limit": 0}},
		{"limit 2001", map[string]any{"roots": []string{id}, "limit": membrane.MaxGraphLimit + 1}},
		{"limit below the roots", map[string]any{"roots": []string{id, id + "x"}, "limit": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.Fail("BAD_USER_INPUT", q, tc.vars)
		})
	}
	t.Run("largest allowed", func(t *testing.T) {
		c.Do(q, map[string]any{"roots": []string{id}, "hops": membrane.MaxGraphHops, "limit": membrane.MaxGraphLimit}, nil)
	})
}

func TestGraphQueryIsGated(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := newClient(t, reader)
	r := c.as(reader.Actor)
	// root -RELATED_TO-> hidden(HYPER) -RELATED_TO-> behind, root -RELATED_TO-> red(HIGH) -RELATED_TO-> beyond,
	// root -RELATED_TO-> away (another scope), and shown -RELATED_TO-> root.
	names, ids := map[string]string{}, map[string]string{}
	for _, n := range []struct{ name, scope, sensitivity string }{
		{"root", scope, "LOW"}, {"hidden", scope, "HYPER"}, {"behind", scope, "LOW"}, {"red", scope, "HIGH"},
		{"beyond", scope, "LOW"}, {"away", other, "LOW"}, {"shown", scope, "MEDIUM"},
	} {
		ids[n.name] = c.Create(n.scope, "SEMANTIC", gqltest.Fact("secret-"+n.name), map[string]any{"sensitivity": n.sensitivity})
		names[ids[n.name]] = n.name
	}
	relate(c, ids["root"], "RELATED_TO", ids["hidden"])
	relate(c, ids["hidden"], "RELATED_TO", ids["behind"])
	relate(c, ids["root"], "RELATED_TO", ids["red"])
	relate(c, ids["red"], "RELATED_TO", ids["beyond"])
	relate(c, ids["root"], "RELATED_TO", ids["away"])
	relate(c, ids["shown"], "RELATED_TO", ids["root"])
	q := `query($roots: [ID!]!) { graph(roots: $roots, hops: 5) ` + graphSel + ` }`

	t.Run("admin sees everything", func(t *testing.T) {
		var g graphResult
		c.Do(q, map[string]any{"roots": []string{ids["root"]}}, &g)
		if got, want := g.nodes(names), "away:1 behind:2 beyond:2 hidden:1 red:1 root:0 shown:1"; got != want {
			t.Fatalf("nodes = %s, want %s", got, want)
		}
	})
	t.Run("invisible absent, redacted shown redacted and not expanded", func(t *testing.T) {
		var g graphResult
		resp := r.Raw(q, map[string]any{"roots": []string{ids["root"]}})
		if len(resp.Errors) > 0 {
			t.Fatalf("errors: %+v", resp.Errors)
		}
		if err := json.Unmarshal(resp.Data, &g); err != nil {
			t.Fatal(err)
		}
		if got, want := g.nodes(names), "red:1:redacted root:0 shown:1"; got != want {
			t.Fatalf("nodes = %s, want %s", got, want)
		}
		if got, want := g.edges(names), "root-RELATED_TO->red shown-RELATED_TO->root"; got != want {
			t.Fatalf("edges = %s, want %s", got, want)
		}
		for _, n := range []string{"hidden", "behind", "beyond", "away"} {
			if bytes.Contains(resp.Body, []byte(ids[n])) {
				t.Errorf("the response names %s: %s", n, resp.Body)
			}
		}
		if bytes.Contains(resp.Body, []byte("secret-red")) {
			t.Errorf("the response shows the redacted record's payload: %s", resp.Body)
		}
		for _, n := range g.Graph.Nodes {
			if n.Record.Redacted && n.Record.Caption != "semantic (redacted)" {
				t.Errorf("caption of a redacted record = %q", n.Record.Caption)
			}
		}
	})
	t.Run("a root the caller cannot see reads as a missing one", func(t *testing.T) {
		missing := membrane.NewID()
		want := r.Fail("NOT_FOUND", q, map[string]any{"roots": []string{missing}})[0].Message
		for _, n := range []string{"hidden", "away"} {
			errs := r.Fail("NOT_FOUND", q, map[string]any{"roots": []string{ids["root"], ids[n]}})
			if got := strings.ReplaceAll(errs[0].Message, ids[n], missing); got != want {
				t.Errorf("%s: message %q, a missing root's %q", n, errs[0].Message, want)
			}
		}
	})
	t.Run("a redacted root is shown redacted and not expanded", func(t *testing.T) {
		var g graphResult
		r.Do(q, map[string]any{"roots": []string{ids["red"]}}, &g)
		if got, want := g.nodes(names), "red:0:redacted"; got != want || len(g.Graph.Edges) != 0 {
			t.Fatalf("nodes = %s, want %s", got, want)
		}
	})
}

func TestRecordCaption(t *testing.T) {
	scope := neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := newClient(t, reader)
	long := strings.Repeat("é", 100)
	for _, tc := range []struct {
		typ     string
		payload map[string]any
		want    string
	}{
		{"SEMANTIC", gqltest.Fact("postgres"), "postgres is x"},
		{"EPISODIC", map[string]any{"episodic": map[string]any{"timeline": []any{
			map[string]any{"t": "2026-01-02T03:04:05Z", "eventKind": "deploy", "ref": "r1"},
			map[string]any{"t": "2026-01-02T03:05:05Z", "eventKind": "error", "ref": "r2", "summary": "pool exhausted"}}}}, "error: pool exhausted"},
		{"EPISODIC", map[string]any{"episodic": map[string]any{"toolGraph": []any{map[string]any{"id": "1", "tool": "bash"}}}}, "tool_call: bash"},
		{"WORKING", map[string]any{"working": map[string]any{"threadId": "t-7", "state": "DONE"}}, "t-7 (done)"},
		{"COMPETENCE", map[string]any{"competence": map[string]any{"skillName": "deploy"}}, "deploy"},
		{"PLAN_GRAPH", map[string]any{"planGraph": map[string]any{"planId": "p1", "intent": "ship it",
			"nodes": []any{map[string]any{"id": "a", "op": "checkout"}}}}, "ship it"},
		{"PLAN_GRAPH", map[string]any{"planGraph": map[string]any{"planId": "p2",
			"nodes": []any{map[string]any{"id": "a", "op": "checkout"}}}}, "plan p2"},
		{"ENTITY", map[string]any{"entity": map[string]any{"canonicalName": "payments"}}, "payments"},
		{"ENTITY", map[string]any{"entity": map[string]any{"canonicalName": long}}, strings.Repeat("é", 40) + "…"},
	} {
		t.Run(tc.typ+" "+tc.want, func(t *testing.T) {
			id := c.Create(scope, tc.typ, tc.payload, map[string]any{"sensitivity": "LOW"})
			var out struct{ Record struct{ Caption string } }
			c.Do(`query($id: ID!) { record(id: $id) { caption } }`, map[string]any{"id": id}, &out)
			if out.Record.Caption != tc.want {
				t.Errorf("caption = %q, want %q", out.Record.Caption, tc.want)
			}
		})
	}
	t.Run("redacted", func(t *testing.T) {
		id := c.Create(scope, "ENTITY", map[string]any{"entity": map[string]any{"canonicalName": "secret-name"}}, map[string]any{"sensitivity": "HIGH"})
		var out struct {
			Record struct {
				Caption  string
				Redacted bool
			}
		}
		c.as(reader.Actor).Do(`query($id: ID!) { record(id: $id) { caption redacted } }`, map[string]any{"id": id}, &out)
		if !out.Record.Redacted || out.Record.Caption != "entity (redacted)" {
			t.Errorf("redacted record: %+v, want caption %q", out.Record, "entity (redacted)")
		}
	})
}

func TestRelationIDIsStable(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	a := c.Create(scope, "SEMANTIC", gqltest.Fact("a"), nil)
	b := c.Create(scope, "SEMANTIC", gqltest.Fact("b"), nil)
	relate(c, a, "DEPENDS_ON", b)
	relate(c, b, "MENTIONS", a)
	want := map[string]string{
		a + "|DEPENDS_ON|" + b: "DEPENDS_ON",
		b + "|MENTIONS|" + a:   "MENTIONS",
	}
	// Every place an edge shows, from this server and from another one
	// started later over the same database: the same ids.
	read := func(c *client) map[string]string {
		got := map[string]string{}
		var g graphResult
		c.Do(`query($r: [ID!]!) { graph(roots: $r) `+graphSel+` }`, map[string]any{"r": []string{a}}, &g)
		for _, e := range g.Graph.Edges {
			got[e.ID] = e.Predicate
		}
		var rel struct {
			Record struct {
				Relations struct {
					Edges []struct {
						Relation struct{ ID, Predicate string }
					}
				}
			}
			Lineage struct {
				Edges []struct{ ID, Predicate string }
			}
		}
		c.Do(`query($id: ID!) { record(id: $id) { relations { edges { relation { id predicate } } } }
		  lineage(id: $id, direction: BOTH, predicates: [DEPENDS_ON, MENTIONS]) { edges { id predicate } } }`, map[string]any{"id": a}, &rel)
		for _, e := range rel.Record.Relations.Edges {
			if p, ok := got[e.Relation.ID]; !ok || p != e.Relation.Predicate {
				t.Errorf("relations: edge id %q (%s) not in the graph's %v", e.Relation.ID, e.Relation.Predicate, got)
			}
		}
		for _, e := range rel.Lineage.Edges {
			if p, ok := got[e.ID]; !ok || p != e.Predicate {
				t.Errorf("lineage: edge id %q (%s) not in the graph's %v", e.ID, e.Predicate, got)
			}
		}
		return got
	}
	for i, got := range []map[string]string{read(c), read(&client{&gqltest.Client{T: t, URL: c.Serve(nil), Key: c.Key}})} {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("server %d: edges %v, want %v", i, got, want)
		}
	}
}

func TestGraphQueryAsOf(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	a := c.Create(scope, "SEMANTIC", gqltest.Fact("a"), nil)
	b := c.Create(scope, "SEMANTIC", gqltest.Fact("b"), nil)
	var rel struct{ AddRelation struct{ CreatedAt string } }
	c.Do(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: USES, targetId: $t, rationale: "seed") { createdAt } }`,
		map[string]any{"s": a, "t": b}, &rel)
	then := rel.AddRelation.CreatedAt
	late := c.Create(scope, "SEMANTIC", gqltest.Fact("late"), nil)
	relate(c, b, "USES", late)
	c.Do(retractQ, map[string]any{"id": b}, nil)
	names := map[string]string{a: "a", b: "b", late: "late"}
	q := `query($r: [ID!]!, $at: DateTime) { graph(roots: $r, asOf: $at) { nodes { depth record { id status version } } edges { id } } }`
	var now, past struct {
		Graph struct {
			Nodes []struct {
				Record struct {
					ID, Status string
					Version    int
				}
			}
			Edges []struct{ ID string }
		}
	}
	show := func(g any) string {
		raw, _ := json.Marshal(g)
		s := string(raw)
		for id, n := range names {
			s = strings.ReplaceAll(s, id, n)
		}
		return s
	}
	c.Do(q, map[string]any{"r": []string{a}}, &now)
	c.Do(q, map[string]any{"r": []string{a}, "at": then}, &past)
	if len(now.Graph.Nodes) != 3 || len(now.Graph.Edges) != 2 {
		t.Errorf("now: %s", show(now))
	}
	if len(past.Graph.Nodes) != 2 || len(past.Graph.Edges) != 1 || past.Graph.Nodes[1].Record.Status != "ACTIVE" {
		t.Errorf("as of the first edge: %s, want a and b (ACTIVE) and their edge", show(past))
	}
	// A root created after asOf did not exist then.
	c.Fail("NOT_FOUND", q, map[string]any{"r": []string{late}, "at": then})
}
