package graph_test

import (
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// sessionEp is an episode of a session test: its name, its first timeline
// event's minute after base, its session and sensitivity (LOW when empty)
// and its summary.
type sessionEp struct {
	name, session, sens, summary string
	min                          int
}

var sessionBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func (e sessionEp) input(scope string) map[string]any {
	sens := e.sens
	if sens == "" {
		sens = "LOW"
	}
	summary := e.summary
	if summary == "" {
		summary = "turn " + e.name
	}
	return map[string]any{"type": "EPISODIC", "scope": scope, "sensitivity": sens, "payload": map[string]any{"episodic": map[string]any{
		"sessionId": e.session,
		"timeline": []any{map[string]any{"t": sessionBase.Add(time.Duration(e.min) * time.Minute).Format(time.RFC3339Nano),
			"eventKind": "user_input", "ref": e.name, "summary": summary}}}}}
}

// writeEpisodes writes one step: a single episode through ingestEvent, or
// a batch through ingestBatch. It returns the ids by name.
func writeEpisodes(t *testing.T, c *client, scope string, eps []sessionEp, ids map[string]string) {
	t.Helper()
	if len(eps) == 1 {
		e := eps[0]
		var out struct{ IngestEvent struct{ ID string } }
		c.Do(`mutation($s: String, $sess: String, $at: DateTime, $sum: String) { ingestEvent(input: {source: "agent", eventKind: "user_input",
			ref: "r", summary: $sum, sessionId: $sess, timestamp: $at, scope: $s}) { id } }`,
			map[string]any{"s": scope, "sess": e.session, "at": sessionBase.Add(time.Duration(e.min) * time.Minute).Format(time.RFC3339Nano),
				"sum": "turn " + e.name}, &out)
		ids[e.name] = out.IngestEvent.ID
		return
	}
	ins := make([]any, len(eps))
	for i, e := range eps {
		ins[i] = e.input(scope)
	}
	var out struct{ IngestBatch []struct{ ID string } }
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": ins}, &out)
	for i, e := range eps {
		ids[e.name] = out.IngestBatch[i].ID
	}
}

// nextOf reads each record's outgoing and incoming NEXT edges (by id) and
// fails when one has more than one either way.
func nextOf(t *testing.T, c *client, ids []string) (next, prev map[string]string) {
	t.Helper()
	next, prev = map[string]string{}, map[string]string{}
	for _, id := range ids {
		var out struct {
			Record struct {
				Out, In struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
		}
		c.Do(`query($id: ID!) { record(id: $id) {
			out: relations(direction: OUT, predicates: [NEXT]) { edges { node { id } } }
			in: relations(direction: IN, predicates: [NEXT]) { edges { node { id } } } } }`, map[string]any{"id": id}, &out)
		if len(out.Record.Out.Edges) > 1 || len(out.Record.In.Edges) > 1 {
			t.Fatalf("record %s has %d outgoing and %d incoming NEXT edges", id, len(out.Record.Out.Edges), len(out.Record.In.Edges))
		}
		if len(out.Record.Out.Edges) == 1 {
			next[id] = out.Record.Out.Edges[0].Node.ID
		}
		if len(out.Record.In.Edges) == 1 {
			prev[id] = out.Record.In.Edges[0].Node.ID
		}
	}
	return next, prev
}

// chainsOf renders the chains through ids as name lists, each walked from
// a record without a predecessor.
func chainsOf(t *testing.T, c *client, ids map[string]string) [][]string {
	t.Helper()
	names := map[string]string{}
	var all []string
	for n, id := range ids {
		names[id] = n
		all = append(all, id)
	}
	next, prev := nextOf(t, c, all)
	var out [][]string
	for _, id := range all {
		if prev[id] != "" {
			continue
		}
		var chain []string
		for x := id; x != ""; x = next[x] {
			chain = append(chain, names[x])
			if len(chain) > len(all) {
				t.Fatalf("NEXT cycle through %v", chain)
			}
		}
		out = append(out, chain)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// TestSessionChain: episodes of a session are chained by time whatever the
// order and the write path (ingestEvent, ingestBatch) they arrive by;
// other sessions and scopes are chains of their own; a sealed episode is
// in none.
func TestSessionChain(t *testing.T) {
	tests := []struct {
		name  string
		steps [][]sessionEp
		want  [][]string
	}{
		{"in order, one at a time",
			[][]sessionEp{{{name: "a", session: "s", min: 0}}, {{name: "b", session: "s", min: 1}}, {{name: "c", session: "s", min: 2}}},
			[][]string{{"a", "b", "c"}}},
		{"out of order, one at a time",
			[][]sessionEp{{{name: "c", session: "s", min: 2}}, {{name: "a", session: "s", min: 0}}, {{name: "b", session: "s", min: 1}}},
			[][]string{{"a", "b", "c"}}},
		{"a batch out of order into an existing chain: before, between and after",
			[][]sessionEp{{{name: "b", session: "s", min: 1}, {name: "d", session: "s", min: 3}},
				{{name: "e", session: "s", min: 4}, {name: "a", session: "s", min: 0}, {name: "c", session: "s", min: 2}, {name: "f", session: "s", min: 5}}},
			[][]string{{"a", "b", "c", "d", "e", "f"}}},
		{"two sessions interleaved in one batch",
			[][]sessionEp{{{name: "x2", session: "x", min: 2}, {name: "y1", session: "y", min: 1}, {name: "x1", session: "x", min: 1}, {name: "y2", session: "y", min: 2}}},
			[][]string{{"x1", "x2"}, {"y1", "y2"}}},
		{"no session, no chain; a sealed episode is in no chain",
			[][]sessionEp{{{name: "a", session: "s", min: 0}, {name: "n", min: 1}, {name: "h", session: "s", sens: "HIGH", min: 2}, {name: "b", session: "s", min: 3}}},
			[][]string{{"a", "b"}, {"h"}, {"n"}}},
	}
	c := newClient(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.with(t)
			scope := neo4jtest.Scope(t)
			ids := map[string]string{}
			for _, step := range tt.steps {
				writeEpisodes(t, c, scope, step, ids)
			}
			if got := chainsOf(t, c, ids); !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("chains %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSessionChainScopesAndTies: the same session id in two scopes is two
// chains; episodes of the same instant are ordered by id.
func TestSessionChainScopesAndTies(t *testing.T) {
	c := newClient(t)
	s1, s2 := neo4jtest.Scope(t), neo4jtest.Scope(t)
	ids := map[string]string{}
	writeEpisodes(t, c, s1, []sessionEp{{name: "p", session: "s", min: 0}, {name: "q", session: "s", min: 0}, {name: "r", session: "s", min: 0}}, ids)
	writeEpisodes(t, c, s2, []sessionEp{{name: "o1", session: "s", min: 0}, {name: "o2", session: "s", min: 1}}, ids)
	byID := []string{"p", "q", "r"}
	sort.Slice(byID, func(i, j int) bool { return ids[byID[i]] < ids[byID[j]] })
	want := [][]string{byID, {"o1", "o2"}}
	sort.Slice(want, func(i, j int) bool { return want[i][0] < want[j][0] })
	if got := chainsOf(t, c, ids); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("chains %v, want %v", got, want)
	}
}

// TestSessionChainDeleteRelinks: deleting an episode joins its neighbours;
// NEXT cannot be written through addRelation.
func TestSessionChainDeleteRelinks(t *testing.T) {
	c := newClientWith(t, func(w *gqltest.Wiring) { w.Stores.Deletes = w.DB })
	scope := neo4jtest.Scope(t)
	ids := map[string]string{}
	writeEpisodes(t, c, scope, []sessionEp{{name: "a", session: "s", min: 0}, {name: "b", session: "s", min: 1},
		{name: "c", session: "s", min: 2}, {name: "d", session: "s", min: 3}}, ids)
	for _, n := range []string{"b", "d"} {
		c.Do(`mutation($id: ID!) { deleteRecord(id: $id, rationale: "test") { id } }`, map[string]any{"id": ids[n]}, nil)
		delete(ids, n)
	}
	if got := chainsOf(t, c, ids); !slices.EqualFunc(got, [][]string{{"a", "c"}}, slices.Equal) {
		t.Errorf("chains after deletes %v, want [[a c]]", got)
	}
	c.Fail("BAD_USER_INPUT", `mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: NEXT, targetId: $b) { predicate } }`,
		map[string]any{"a": ids["c"], "b": ids["a"]})
	if got := chainsOf(t, c, ids); !slices.EqualFunc(got, [][]string{{"a", "c"}}, slices.Equal) {
		t.Errorf("chains after a refused addRelation %v", got)
	}
}

type graphHit struct {
	Score float64
	Parts struct {
		Relevance, Fused, Text, Context, Entity, Derived float64
	}
	Record struct{ ID string }
}

// retrieveParts retrieves with the graph parts selected, keyed by id.
func retrieveParts(t *testing.T, c *client, in map[string]any) (map[string]graphHit, []string) {
	t.Helper()
	var out struct{ Retrieve struct{ Hits []graphHit } }
	c.Do(`query($in: RetrieveInput!) { retrieve(input: $in) { hits { score parts { relevance fused text context entity derived } record { id } } } }`,
		map[string]any{"in": in}, &out)
	byID := map[string]graphHit{}
	var order []string
	for _, h := range out.Retrieve.Hits {
		byID[h.Record.ID] = h
		order = append(order, h.Record.ID)
	}
	return byID, order
}

// TestRetrieveGraphSignals: a record is found through its neighbourhood:
// the episodes next to a match in its session (one hop: the match's text
// score, two: half of it, three: nothing), the records that mention an
// entity the query names, and the records derived from a match. The parts
// say why.
func TestRetrieveGraphSignals(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	q, ent, der, said := word(), word(), word(), word()
	ids := map[string]string{}
	writeEpisodes(t, c, scope, []sessionEp{
		{name: "match", session: "s", min: 0, summary: "where did we go hiking " + q},
		{name: "hop1", session: "s", min: 1, summary: "to the lake by the old mill"},
		{name: "hop2", session: "s", min: 2, summary: "and then we had lunch"},
		{name: "hop3", session: "s", min: 3, summary: "it rained all afternoon"},
		{name: "mentions", session: "other", min: 0, summary: "the service went down twice " + said},
	}, ids)
	var entity struct{ CreateRecord struct{ ID string } }
	c.Do(`mutation($s: String, $n: String!) { createRecord(input: {type: ENTITY, scope: $s, payload: {entity: {canonicalName: $n}}}) { id } }`,
		map[string]any{"s": scope, "n": ent}, &entity)
	c.Do(`mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: MENTIONS, targetId: $b) { predicate } }`,
		map[string]any{"a": ids["mentions"], "b": entity.CreateRecord.ID}, nil)
	captured := c.capture(map[string]any{"source": "agent-1", "sourceKind": "observation", "scope": scope,
		"content": map[string]any{"subject": "billing", "predicate": "uses", "object": der}})
	awaitSearch(t, c)

	tests := []struct {
		name, query string
		// want: id -> [text, context, entity, derived] (> 0 or 0); absent: ids not returned
		want   map[string][4]bool
		absent []string
	}{
		{"session neighbours", q,
			map[string][4]bool{ids["match"]: {true, false, false, false}, ids["hop1"]: {false, true, false, false}, ids["hop2"]: {false, true, false, false}},
			[]string{ids["hop3"], ids["mentions"]}},
		{"records mentioning a named entity", ent,
			map[string][4]bool{entity.CreateRecord.ID: {true, false, false, false}, ids["mentions"]: {false, false, true, false}},
			[]string{ids["match"]}},
		{"entities a match mentions", said,
			map[string][4]bool{ids["mentions"]: {true, false, false, false}, entity.CreateRecord.ID: {false, false, true, false}},
			[]string{ids["match"]}},
		{"records derived from a match and what a match derives from", der,
			map[string][4]bool{captured.CaptureMemory.Primary.ID: {true, false, false, true}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.with(t)
			got, _ := retrieveParts(t, c, map[string]any{"query": tt.query, "scopes": []string{scope}, "limit": 20})
			for id, w := range tt.want {
				h, ok := got[id]
				if !ok {
					t.Fatalf("%s not retrieved (hits %+v)", id, got)
				}
				p := h.Parts
				if (p.Text > 0) != w[0] || (p.Context > 0) != w[1] || (p.Entity > 0) != w[2] || (p.Derived > 0) != w[3] {
					t.Errorf("%s parts %+v, want text/context/entity/derived > 0 = %v", id, p, w)
				}
				if p.Fused <= 0 || p.Relevance <= 0 {
					t.Errorf("%s fused %v relevance %v", id, p.Fused, p.Relevance)
				}
			}
			for _, id := range tt.absent {
				if _, ok := got[id]; ok {
					t.Errorf("%s retrieved: %+v", id, got[id])
				}
			}
		})
	}
	// An entity that matches passes EntityFanIn of its text score to the
	// records that mention it; a match passes all of its score to the
	// entity it mentions (each is the best and only seed here, t = 1).
	if got, _ := retrieveParts(t, c, map[string]any{"query": ent, "scopes": []string{scope}, "limit": 20}); got[ids["mentions"]].Parts.Entity != membrane.EntityFanIn {
		t.Errorf("a record mentioning the matching entity: entity %v, want %v", got[ids["mentions"]].Parts.Entity, membrane.EntityFanIn)
	}
	if got, _ := retrieveParts(t, c, map[string]any{"query": said, "scopes": []string{scope}, "limit": 20}); got[entity.CreateRecord.ID].Parts.Entity != 1 {
		t.Errorf("the entity a match mentions: entity %v, want 1", got[entity.CreateRecord.ID].Parts.Entity)
	}
	// One hop after the match is worth its text score, two hops half of
	// it, over the most a record can collect (ContextNorm).
	got, order := retrieveParts(t, c, map[string]any{"query": q, "scopes": []string{scope}, "limit": 20})
	if h1, h2 := got[ids["hop1"]].Parts.Context, got[ids["hop2"]].Parts.Context; h1 != membrane.ContextAfter/membrane.ContextNorm || h2 != membrane.ContextAfter*membrane.SecondHop/membrane.ContextNorm {
		t.Errorf("context one hop %v, two hops %v", h1, h2)
	}
	if !slices.Equal(order[:3], []string{ids["match"], ids["hop1"], ids["hop2"]}) {
		t.Errorf("order %v, want match, hop1, hop2 first", order)
	}
	// retrieveGraph shows the chain: NEXT edges between the roots.
	var g graphOut
	c.Do(graphQ, map[string]any{"in": map[string]any{"query": q, "scopes": []string{scope}, "maxHops": 1}}, &g)
	found := false
	for _, e := range g.RetrieveGraph.Edges {
		found = found || (e.Predicate == "NEXT" && e.SourceID == ids["match"] && e.TargetID == ids["hop1"])
	}
	if !found {
		t.Errorf("retrieveGraph edges %+v lack match NEXT hop1", g.RetrieveGraph.Edges)
	}
}

// TestRetrieveGraphSignalsDirection: a match passes its text score to the
// episodes after it at full weight and to those before it at
// ContextBefore: the reply to a matching turn outranks the turn it
// answers. The store's context (Cypher) equals membrane.ContextScore, the
// definition.
func TestRetrieveGraphSignalsDirection(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	q := word()
	ids := map[string]string{}
	writeEpisodes(t, c, scope, []sessionEp{
		{name: "before2", session: "s", min: 0, summary: "we packed the car"},
		{name: "before1", session: "s", min: 1, summary: "and drove north for an hour"},
		{name: "match", session: "s", min: 2, summary: "which trail did we take " + q},
		{name: "after1", session: "s", min: 3, summary: "the ridge path above the valley"},
		{name: "after2", session: "s", min: 4, summary: "it was steep near the top"},
	}, ids)
	awaitSearch(t, c)
	got, order := retrieveParts(t, c, map[string]any{"query": q, "scopes": []string{scope}, "limit": 20})
	type sn = membrane.SessionNeighbour
	for name, want := range map[string]float64{
		"after1":  membrane.ContextScore([]sn{{T: 1, Hops: 1, After: true}}),
		"after2":  membrane.ContextScore([]sn{{T: 1, Hops: 2, After: true}}),
		"before1": membrane.ContextScore([]sn{{T: 1, Hops: 1}}),
		"before2": membrane.ContextScore([]sn{{T: 1, Hops: 2}}),
	} {
		if h, ok := got[ids[name]]; !ok || math.Abs(h.Parts.Context-want) > 1e-9 {
			t.Errorf("%s: context %v, want %v (retrieved %v)", name, h.Parts.Context, want, ok)
		}
	}
	if want := []string{ids["match"], ids["after1"]}; len(order) < 2 || !slices.Equal(order[:2], want) {
		t.Errorf("order %v, want the match and then the reply after it %v", order, want)
	}
	if slices.Index(order, ids["after1"]) > slices.Index(order, ids["before1"]) {
		t.Errorf("order %v: the episode before the match ranks above the one after it", order)
	}
}

// TestRetrieveGraphSignalsGating: a record the caller does not see in full
// passes no signal and is not returned, and a neighbour two hops away
// through such a record gets nothing through it. A reader with ceiling LOW;
// MEDIUM records are above it (not sealed, so they are in the chain).
func TestRetrieveGraphSignalsGating(t *testing.T) {
	scope := neo4jtest.Scope(t)
	rd := reader("signals", membrane.SensitivityLow, scope)
	c := newClient(t, rd)
	q := word()
	ids := map[string]string{}
	writeEpisodes(t, c, scope, []sessionEp{
		{name: "seen", session: "a", min: 0, summary: "asked about " + q},
		{name: "hidden", session: "a", min: 1, sens: "MEDIUM", summary: "the answer"},
		{name: "behind", session: "a", min: 2, summary: "later"},
		{name: "hiddenMatch", session: "b", min: 0, sens: "MEDIUM", summary: "also " + q},
		{name: "nextToHidden", session: "b", min: 1, summary: "reply"},
	}, ids)
	awaitSearch(t, c)
	in := map[string]any{"query": q, "scopes": []string{scope}, "limit": 20}
	// The admin sees every one: the chains are there.
	all, _ := retrieveParts(t, c, in)
	for n, id := range ids {
		if _, ok := all[id]; !ok {
			t.Fatalf("admin does not retrieve %s: %+v", n, all)
		}
	}
	got, order := retrieveParts(t, c.as(rd.Actor), in)
	if !slices.Equal(order, []string{ids["seen"]}) {
		names := map[string]string{}
		for n, id := range ids {
			names[id] = n
		}
		var ns []string
		for _, id := range order {
			ns = append(ns, names[id])
		}
		t.Fatalf("reader retrieves %v, want [seen]", ns)
	}
	if p := got[ids["seen"]].Parts; p.Context != 0 || p.Text != 1 {
		t.Errorf("seen parts %+v", p)
	}
}
