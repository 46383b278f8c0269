package graph_test

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

const graphQ = `query($in: RetrieveGraphInput!) { retrieveGraph(input: $in) {
  nodes { root hop hit { score parts { relevance } } record { id type sensitivity scope redacted payload { __typename } } }
  edges { predicate sourceId targetId weight actor }
  selection { confidence needsMore }
  truncated } }`

type graphOut struct {
	RetrieveGraph struct {
		Nodes []struct {
			Root   bool
			Hop    int
			Hit    *struct{ Score float64 }
			Record struct {
				ID, Type, Sensitivity, Scope string
				Redacted                     bool
				Payload                      *struct {
					Typename string `json:"__typename"`
				}
			}
		}
		Edges []struct {
			Predicate, SourceID, TargetID, Actor string
			Weight                               float64
		}
		Truncated bool
	}
}

// retrMatrix is one record per (sensitivity relative to a medium ceiling) x
// (scope relative to the principal), all with the same text.
type retrMatrix struct {
	ids   map[string]string // "below/in" -> id
	names map[string]string // id -> "below/in"
}

var (
	retrLevels = []struct {
		name string
		sens membrane.Sensitivity
	}{{"below", membrane.SensitivityLow}, {"at", membrane.SensitivityMedium}, {"one-above", membrane.SensitivityHigh}, {"two-above", membrane.SensitivityHyper}}
	retrPlaces = []string{"in", "out", "unscoped"}
)

func newRetrMatrix(t *testing.T, c *client, in, out, text string) *retrMatrix {
	t.Helper()
	m := &retrMatrix{ids: map[string]string{}, names: map[string]string{}}
	var recs []*membrane.Record
	for _, l := range retrLevels {
		for _, p := range retrPlaces {
			scope := map[string]string{"in": in, "out": out, "unscoped": ""}[p]
			r := factRecord(t, scope, text, time.Now().UTC(), func(r *membrane.Record) { r.Sensitivity = l.sens })
			recs = append(recs, r)
			m.ids[l.name+"/"+p] = r.ID
			m.names[r.ID] = l.name + "/" + p
		}
	}
	stored(t, c, recs...)
	return m
}

func (m *retrMatrix) named(ids []string) []string {
	var out []string
	for _, id := range ids {
		if n, ok := m.names[id]; ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// TestRetrieveGating: a reader with ceiling medium and one scope sees, of
// records with the query's words, exactly those at or below its ceiling in
// its scope or unscoped. One level above is not searched (its text is not
// the reader's to match), two above and other scopes never.
func TestRetrieveGating(t *testing.T) {
	in, out := neo4jtest.Scope(t), neo4jtest.Scope(t)
	rd := reader("gated", membrane.SensitivityMedium, in)
	low := reader("low", membrane.SensitivityLow, in)
	c := newClient(t, rd, low)
	w := word()
	m := newRetrMatrix(t, c, in, out, w)
	rc := c.as(rd.Actor)
	got := rc.retrieve(map[string]any{"query": w, "limit": 20})
	want := []string{"at/in", "at/unscoped", "below/in", "below/unscoped"}
	if names := m.named(hitIDs(got.Retrieve.Hits)); !slices.Equal(names, want) || len(got.Retrieve.Hits) != 4 {
		t.Fatalf("hits %v, want %v", names, want)
	}
	for _, h := range got.Retrieve.Hits {
		if h.Record.Redacted {
			t.Errorf("hit %s is redacted", m.names[h.Record.ID])
		}
	}
	// Relevance is normalised among what the reader sees: the best visible
	// match scores 1, whatever hidden records scored.
	if got.Retrieve.Hits[0].Parts.Text != 1 {
		t.Errorf("best text part %v", got.Retrieve.Hits[0].Parts.Text)
	}
	// With a lower ceiling, less.
	if names := m.named(hitIDs(c.as(low.Actor).retrieve(map[string]any{"query": w, "limit": 20}).Retrieve.Hits)); !slices.Equal(names, []string{"below/in", "below/unscoped"}) {
		t.Errorf("ceiling low: %v", names)
	}
	// An admin finds all twelve: the high and hyper ones are encrypted at
	// rest, their text in no index, and they are found through the keyed
	// blind index, only by principals cleared for them (docs/security.md).
	if n := len(c.retrieve(map[string]any{"query": w, "limit": 20}).Retrieve.Hits); n != 12 {
		t.Errorf("admin sees %d", n)
	}
	// Invisible records leave no trace in the response.
	resp := rc.Raw(retrieveQ, map[string]any{"in": map[string]any{"query": w, "limit": 20, "includeRetracted": true}})
	for _, k := range []string{"one-above/in", "two-above/in", "two-above/unscoped", "below/out", "at/out"} {
		if strings.Contains(string(resp.Data), m.ids[k]) {
			t.Errorf("response reveals %s", k)
		}
	}
}

// TestRetrieveGraphGating builds a root linked to the whole retrMatrix (some
// edges in, some out) and chains behind a redacted and an invisible record.
func TestRetrieveGraphGating(t *testing.T) {
	in, out := neo4jtest.Scope(t), neo4jtest.Scope(t)
	rd := reader("graph", membrane.SensitivityMedium, in)
	c := newClient(t, rd)
	m := newRetrMatrix(t, c, in, out, word())
	w := word()
	now := time.Now().UTC()
	root := factRecord(t, in, w, now)
	behindRedacted := factRecord(t, in, "behind redacted", now)
	behindHidden := factRecord(t, in, "behind hidden", now)
	hop2 := factRecord(t, in, "two hops away", now)
	stored(t, c, root, behindRedacted, behindHidden, hop2)
	relate := func(from, to string) {
		c.Do(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: RELATED_TO, targetId: $t) { predicate } }`, map[string]any{"s": from, "t": to}, nil)
	}
	for k, id := range m.ids {
		if strings.HasSuffix(k, "/unscoped") {
			relate(id, root.ID) // incoming edges are followed too
		} else {
			relate(root.ID, id)
		}
	}
	relate(m.ids["one-above/in"], behindRedacted.ID)
	relate(m.ids["two-above/in"], behindHidden.ID)
	relate(m.ids["below/in"], hop2.ID)
	rc := c.as(rd.Actor)

	run := func(in map[string]any) graphOut {
		t.Helper()
		var g graphOut
		rc.Do(graphQ, map[string]any{"in": in}, &g)
		return g
	}
	g := run(map[string]any{"query": w, "maxHops": 2, "nodeLimit": 50, "edgeLimit": 50})
	nodes := map[string]int{}
	var redacted []string
	for _, n := range g.RetrieveGraph.Nodes {
		nodes[n.Record.ID] = n.Hop
		if n.Record.Redacted {
			redacted = append(redacted, m.names[n.Record.ID])
			if n.Record.Payload != nil {
				t.Errorf("redacted %s has a payload", m.names[n.Record.ID])
			}
		}
	}
	r0 := g.RetrieveGraph.Nodes[0]
	if !r0.Root || r0.Hop != 0 || r0.Record.ID != root.ID || r0.Hit == nil {
		t.Fatalf("first node %+v", r0)
	}
	var hop1 []string
	for id, h := range nodes {
		if h == 1 {
			hop1 = append(hop1, id)
		}
	}
	want := []string{"at/in", "at/unscoped", "below/in", "below/unscoped", "one-above/in", "one-above/unscoped"}
	if got := m.named(hop1); !slices.Equal(got, want) {
		t.Errorf("hop 1 %v, want %v", got, want)
	}
	sort.Strings(redacted)
	if !slices.Equal(redacted, []string{"one-above/in", "one-above/unscoped"}) {
		t.Errorf("redacted %v", redacted)
	}
	if nodes[hop2.ID] != 2 {
		t.Errorf("the record two hops away through a visible one: hop %v", nodes[hop2.ID])
	}
	if _, ok := nodes[behindRedacted.ID]; ok {
		t.Error("expanded through a redacted record")
	}
	if _, ok := nodes[behindHidden.ID]; ok {
		t.Error("expanded through an invisible record")
	}
	if len(nodes) != 8 {
		t.Errorf("%d nodes", len(nodes))
	}
	// Edges: the 6 of the root to what the reader sees, and below/in to hop2.
	if len(g.RetrieveGraph.Edges) != 7 {
		t.Errorf("edges %+v", g.RetrieveGraph.Edges)
	}
	for _, e := range g.RetrieveGraph.Edges {
		if _, ok := nodes[e.SourceID]; !ok {
			t.Errorf("edge from a node not returned: %+v", e)
		}
		if _, ok := nodes[e.TargetID]; !ok {
			t.Errorf("edge to a node not returned: %+v", e)
		}
		if e.Predicate != "RELATED_TO" || e.Weight != 1 || e.Actor != c.Actor {
			t.Errorf("edge %+v", e)
		}
		unscoped := strings.HasSuffix(m.names[e.SourceID], "/unscoped")
		if unscoped != (e.TargetID == root.ID) {
			t.Errorf("edge direction %s -> %s", m.names[e.SourceID], m.names[e.TargetID])
		}
	}
	if g.RetrieveGraph.Truncated {
		t.Error("truncated")
	}
	resp := rc.Raw(graphQ, map[string]any{"in": map[string]any{"query": w, "maxHops": 5, "nodeLimit": 1000, "edgeLimit": 5000}})
	for _, k := range []string{"two-above/in", "two-above/unscoped", "below/out", "at/out", "one-above/out"} {
		if strings.Contains(string(resp.Data), m.ids[k]) {
			t.Errorf("response reveals %s", k)
		}
	}
	for _, id := range []string{behindRedacted.ID, behindHidden.ID} {
		if strings.Contains(string(resp.Data), id) {
			t.Errorf("response reveals a record behind a redacted or invisible one")
		}
	}

	t.Run("roots only", func(t *testing.T) {
		g := run(map[string]any{"query": w, "maxHops": 0})
		if len(g.RetrieveGraph.Nodes) != 1 || len(g.RetrieveGraph.Edges) != 0 {
			t.Fatalf("%+v", g.RetrieveGraph)
		}
	})
	t.Run("limits truncate", func(t *testing.T) {
		g := run(map[string]any{"query": w, "maxHops": 2, "nodeLimit": 3, "edgeLimit": 50})
		if len(g.RetrieveGraph.Nodes) != 3 || len(g.RetrieveGraph.Edges) != 2 || !g.RetrieveGraph.Truncated {
			t.Fatalf("node limit: %d nodes, %d edges, truncated %v", len(g.RetrieveGraph.Nodes), len(g.RetrieveGraph.Edges), g.RetrieveGraph.Truncated)
		}
		g = run(map[string]any{"query": w, "maxHops": 2, "nodeLimit": 50, "edgeLimit": 2})
		if len(g.RetrieveGraph.Edges) != 2 || !g.RetrieveGraph.Truncated {
			t.Fatalf("edge limit: %d edges, truncated %v", len(g.RetrieveGraph.Edges), g.RetrieveGraph.Truncated)
		}
	})
	t.Run("bounded round trips", func(t *testing.T) {
		before := c.DB.TxCount()
		run(map[string]any{"query": w, "maxHops": 5})
		if n := c.DB.TxCount() - before; n != 1 {
			t.Fatalf("transactions = %d, want 1", n)
		}
	})
}
