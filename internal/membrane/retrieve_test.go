package membrane_test

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNewRetrieveQuery(t *testing.T) {
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	q, err := membrane.NewRetrieveQuery(nil, nil, nil, nil, nil, nil, nil)
	if err != nil || q.Limit != 10 || q.HasQuery() || q.IncludeRetracted || !reflect.DeepEqual(q.Layers, membrane.MemoryTypes) {
		t.Fatalf("defaults = %+v, %v", q, err)
	}
	q, err = membrane.NewRetrieveQuery(s(" Postgres "), []membrane.MemoryType{membrane.TypeEpisodic, membrane.TypeSemantic, membrane.TypeWorking}, []string{"a"}, f(0.2), i(5), nil, nil)
	if err != nil || q.Text != "Postgres" || !reflect.DeepEqual(q.Terms, []string{"postgr"}) || q.Limit != 5 || q.MinSalience != 0.2 ||
		!reflect.DeepEqual(q.Layers, []membrane.MemoryType{membrane.TypeWorking, membrane.TypeSemantic, membrane.TypeEpisodic}) {
		t.Fatalf("query = %+v, %v", q, err)
	}
	// Only stop words: no terms, not refused, and it matches nothing.
	q, err = membrane.NewRetrieveQuery(s("what is it?"), nil, nil, nil, nil, nil, nil)
	if err != nil || len(q.Terms) != 0 || !q.Unmatchable() || q.HasQuery() {
		t.Fatalf("stop words: %+v, %v", q, err)
	}
	q.Vector = []float64{1}
	if q.Unmatchable() {
		t.Errorf("a query with a vector is matchable")
	}
	q, err = membrane.NewRetrieveQuery(s(" Postgres "), []membrane.MemoryType{membrane.TypeEpisodic, membrane.TypeSemantic, membrane.TypeWorking}, []string{"a"}, f(0.2), i(5), nil, nil)
	if err != nil || q.Unmatchable() {
		t.Fatal(err)
	}
	if q.ScanLimit() != 100 {
		t.Errorf("scan %d", q.ScanLimit())
	}
	q.Limit = 100
	if q.ScanLimit() != 1000 {
		t.Errorf("scan %d", q.ScanLimit())
	}
	// With a vector: 3 full-text matches per result, 2.5 neighbours.
	for _, tt := range []struct{ limit, scan, vectors int }{{5, 60, 50}, {20, 60, 50}, {40, 120, 100}, {100, 300, 250}} {
		q.Limit, q.Vector = tt.limit, []float64{1}
		if q.ScanLimit() != tt.scan || q.VectorScanLimit() != tt.vectors {
			t.Errorf("limit %d with a vector: scan %d, vectors %d; want %d, %d", tt.limit, q.ScanLimit(), q.VectorScanLimit(), tt.scan, tt.vectors)
		}
	}
	bad := []struct {
		name  string
		field string
		call  func() error
	}{
		{"limit 0", "limit", func() error { _, err := membrane.NewRetrieveQuery(nil, nil, nil, nil, i(0), nil, nil); return err }},
		{"limit 101", "limit", func() error { _, err := membrane.NewRetrieveQuery(nil, nil, nil, nil, i(101), nil, nil); return err }},
		{"negative salience", "minSalience", func() error { _, err := membrane.NewRetrieveQuery(nil, nil, nil, f(-1), nil, nil, nil); return err }},
		{"NaN salience", "minSalience", func() error {
			_, err := membrane.NewRetrieveQuery(nil, nil, nil, f(math.NaN()), nil, nil, nil)
			return err
		}},
		{"long query", "query", func() error {
			_, err := membrane.NewRetrieveQuery(s(strings.Repeat("x", membrane.MaxQueryBytes+1)), nil, nil, nil, nil, nil, nil)
			return err
		}},
		{"no words", "query", func() error { _, err := membrane.NewRetrieveQuery(s("?!"), nil, nil, nil, nil, nil, nil); return err }},
		{"NUL", "query", func() error { _, err := membrane.NewRetrieveQuery(s("\x00"), nil, nil, nil, nil, nil, nil); return err }},
		{"lone surrogate", "query", func() error {
			_, err := membrane.NewRetrieveQuery(s("\xed\xa0\x80"), nil, nil, nil, nil, nil, nil)
			return err
		}},
		{"bad type", "memoryTypes", func() error {
			_, err := membrane.NewRetrieveQuery(nil, []membrane.MemoryType{"x"}, nil, nil, nil, nil, nil)
			return err
		}},
	}
	for _, b := range bad {
		err := b.call()
		if membrane.ErrorCode(err) != membrane.EINVALID || len(membrane.ErrorFields(err)) == 0 || membrane.ErrorFields(err)[0].Field != b.field {
			t.Errorf("%s: err = %v (fields %+v), want BAD_USER_INPUT on %s", b.name, err, membrane.ErrorFields(err), b.field)
		}
	}
}

func TestNewGraphQuery(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	g, err := membrane.NewGraphQuery(nil, nil, nil, nil, nil, nil, nil)
	if err != nil || g.Roots.Limit != 10 || g.NodeLimit != 25 || g.EdgeLimit != 100 || g.MaxHops != 1 || g.Fanout() != 101 {
		t.Fatalf("defaults = %+v, %v", g, err)
	}
	g, err = membrane.NewGraphQuery(nil, nil, nil, i(50), i(20), i(0), i(0))
	if err != nil || g.Roots.Limit != 20 || g.NodeLimit != 20 || g.EdgeLimit != 0 || g.MaxHops != 0 {
		t.Fatalf("roots capped by nodes = %+v, %v", g, err)
	}
	for _, tt := range []struct {
		field                  string
		root, node, edge, hops *int64
	}{
		{"rootLimit", i(0), nil, nil, nil},
		{"nodeLimit", nil, i(1001), nil, nil},
		{"edgeLimit", nil, nil, i(-1), nil},
		{"maxHops", nil, nil, nil, i(6)},
	} {
		_, err := membrane.NewGraphQuery(nil, nil, nil, tt.root, tt.node, tt.edge, tt.hops)
		if f := membrane.ErrorFields(err); len(f) != 1 || f[0].Field != tt.field {
			t.Errorf("%s: err = %v, fields %+v", tt.field, err, f)
		}
	}
	q := "?"
	if _, err := membrane.NewGraphQuery(&q, nil, nil, i(0), nil, nil, nil); len(membrane.ErrorFields(err)) != 2 {
		t.Errorf("query and rootLimit errors together: %+v", membrane.ErrorFields(err))
	}
}

func TestRecency(t *testing.T) {
	now := time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		created time.Time
		want    float64
	}{
		{now, 1},
		{now.Add(time.Hour), 1},
		{now.Add(-7 * 24 * time.Hour), 0.5},
		{now.Add(-14 * 24 * time.Hour), 0.25},
		{now.Add(-84 * time.Hour), math.Sqrt(0.5)},
	}
	for _, tt := range tests {
		if got := membrane.Recency(tt.created, now); !near(got, tt.want) {
			t.Errorf("Recency(%v) = %v, want %v", now.Sub(tt.created), got, tt.want)
		}
	}
}

func TestRank(t *testing.T) {
	now := time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)
	week := now.Add(-7 * 24 * time.Hour)
	vec := func(v float64) *float64 { return &v }
	query := membrane.RetrieveQuery{Terms: []string{"x"}, Limit: 10}
	latest := membrane.RetrieveQuery{Terms: []string{"x"}, Limit: 10, Order: membrane.OrderLatest}
	browse := membrane.RetrieveQuery{Limit: 10}
	type want struct {
		id                                         string
		score, relevance, text, sal, recency, conf float64
		vector                                     *float64
	}
	tests := []struct {
		name  string
		q     membrane.RetrieveQuery
		cands []membrane.Candidate
		want  []want
	}{
		{
			name: "text normalised by the best match; query weights, no recency",
			q:    query,
			cands: []membrane.Candidate{
				{ID: "b", Type: membrane.TypeSemantic, Text: 2, Salience: 1, Confidence: 1, CreatedAt: now},
				{ID: "a", Type: membrane.TypeSemantic, Text: 4, Salience: 0.5, Confidence: 0.5, CreatedAt: week},
			},
			want: []want{
				// 0.7·1 + 0.2·0.5 + 0.1·0.5
				{"a", 0.85, 1, 1, 0.5, 0.5, 0.5, nil},
				// 0.7·0.5 + 0.2·1 + 0.1·1
				{"b", 0.65, 0.5, 0.5, 1, 1, 1, nil},
			},
		},
		{
			name: "a query asking for the latest: recency counts",
			q:    latest,
			cands: []membrane.Candidate{
				{ID: "b", Type: membrane.TypeSemantic, Text: 3.8, Salience: 1, Confidence: 1, CreatedAt: now},
				{ID: "a", Type: membrane.TypeSemantic, Text: 4, Salience: 1, Confidence: 1, CreatedAt: week},
			},
			want: []want{
				// 0.6·0.95 + 0.2 + 0.1·1 + 0.1: the newer, a little weaker match first
				{"b", 0.97, 0.95, 0.95, 1, 1, 1, nil},
				// 0.6·1 + 0.2 + 0.1·0.5 + 0.1
				{"a", 0.95, 1, 1, 1, 0.5, 1, nil},
			},
		},
		{
			name: "salience above 1 counts as 1; negative as 0",
			q:    query,
			cands: []membrane.Candidate{
				{ID: "hi", Type: membrane.TypeWorking, Text: 1, Salience: 3, Confidence: 0, CreatedAt: week},
				{ID: "lo", Type: membrane.TypeWorking, Text: 1, Salience: -1, Confidence: 0, CreatedAt: week},
			},
			want: []want{
				{"hi", 0.7 + 0.2, 1, 1, 1, 0.5, 0, nil},
				{"lo", 0.7, 1, 1, 0, 0.5, 0, nil},
			},
		},
		{
			name: "without a query: browse weights, no relevance",
			q:    browse,
			cands: []membrane.Candidate{
				{ID: "old", Type: membrane.TypeSemantic, Salience: 1, Confidence: 1, CreatedAt: week},
				{ID: "new", Type: membrane.TypeSemantic, Salience: 0.2, Confidence: 0.5, CreatedAt: now},
			},
			want: []want{
				// 0.5·1 + 0.3·0.5 + 0.2·1
				{"old", 0.85, 0, 0, 1, 0.5, 1, nil},
				// 0.5·0.2 + 0.3·1 + 0.2·0.5
				{"new", 0.5, 0, 0, 0.2, 1, 0.5, nil},
			},
		},
		{
			name: "vector similarity fuses with the text; negative similarity counts 0",
			q:    membrane.RetrieveQuery{Terms: []string{"x"}, Vector: []float64{1}, Limit: 10},
			cands: []membrane.Candidate{
				{ID: "v", Type: membrane.TypeSemantic, Text: 0, Vector: vec(0.9), Salience: 1, Confidence: 1, CreatedAt: now},
				{ID: "t", Type: membrane.TypeSemantic, Text: 5, Vector: vec(-0.3), Salience: 1, Confidence: 1, CreatedAt: now},
				{ID: "n", Type: membrane.TypeSemantic, Text: 2.5, Salience: 1, Confidence: 1, CreatedAt: now},
			},
			want: []want{
				// The vector weighs 2, the text 1: fused v = 2·0.9/Σw is the
				// best, so relevance = fused / (1.8/Σw).
				{"v", 0.7 + 0.3, 1, 0, 1, 1, 1, vec(0.9)},
				{"t", 0.7*(1/1.8) + 0.3, 1 / 1.8, 1, 1, 1, 1, vec(0)},
				// no vector: the text part alone
				{"n", 0.7*(0.5/1.8) + 0.3, 0.5 / 1.8, 0.5, 1, 1, 1, nil},
			},
		},
		{
			name: "graph signals: a neighbour of the best match outranks a weak match",
			q:    query,
			cands: []membrane.Candidate{
				{ID: "match", Type: membrane.TypeEpisodic, Text: 4, CreatedAt: week},
				{ID: "weak", Type: membrane.TypeEpisodic, Text: 1, CreatedAt: week},
				// No text of its own: found through its session neighbour.
				{ID: "next", Type: membrane.TypeEpisodic, Context: 0.8, CreatedAt: week},
				{ID: "fact", Type: membrane.TypeSemantic, Derived: 1, Entity: 0.5, CreatedAt: week},
				{ID: "over", Type: membrane.TypeSemantic, Text: 4, Context: 2, Entity: -1, CreatedAt: week},
			},
			want: []want{
				// Σw = 3.1. over: text 1, context counts 1 (clamped), entity 0:
				// 1 + 1.5 = 2.5, the best, so relevance = weighted sum / 2.5
				{"over", 0.7, 1, 1, 0, 0.5, 0, nil},
				// 1.5·0.8 = 1.2: next to the best match, above a text match
				// as good as it
				{"next", 0.7 * 0.48, 0.48, 0, 0, 0.5, 0, nil},
				{"match", 0.7 * 0.4, 0.4, 1, 0, 0.5, 0, nil},
				// 0.3·1 + 0.3·0.5 = 0.45, relevance 0.18, but at least
				// EntityFloor·entity = 0.25
				{"fact", 0.7 * 0.25, 0.25, 0, 0, 0.5, 0, nil},
				{"weak", 0.7 * 0.1, 0.1, 0.25, 0, 0.5, 0, nil},
			},
		},
		{
			name: "the entity the best match names is at least half as relevant as it, with vectors too",
			q:    membrane.RetrieveQuery{Terms: []string{"x"}, Vector: []float64{1}, Limit: 10},
			cands: []membrane.Candidate{
				{ID: "match", Type: membrane.TypeSemantic, Text: 2, Vector: vec(0.8), CreatedAt: week},
				{ID: "topic", Type: membrane.TypeSemantic, Text: 0.6, Vector: vec(0.4), CreatedAt: week},
				// No word of the query and far from it as a vector: reached
				// because the best match is about it.
				{ID: "person", Type: membrane.TypeEntity, Vector: vec(0.1), Entity: 1, CreatedAt: week},
			},
			want: []want{
				// Σw = 5.1: match 1 + 2·0.8 = 2.6, the best
				{"match", 0.7, 1, 1, 0, 0.5, 0, vec(0.8)},
				// person: 0.3·1 + 2·0.1 = 0.5, relevance 0.5/2.6 = 0.19,
				// lifted to EntityFloor·1 = 0.5, above topic
				{"person", 0.7 * 0.5, 0.5, 0, 0, 0.5, 0, vec(0.1)},
				// topic: 0.3 + 2·0.4 = 1.1, relevance 1.1/2.6
				{"topic", 0.7 * 1.1 / 2.6, 1.1 / 2.6, 0.3, 0, 0.5, 0, vec(0.4)},
			},
		},
		{
			name: "ties: layer order, then newest, then id",
			q:    query,
			cands: []membrane.Candidate{
				{ID: "e2", Type: membrane.TypeEpisodic, Text: 1, CreatedAt: week},
				{ID: "s1", Type: membrane.TypeSemantic, Text: 1, CreatedAt: week},
				{ID: "w2", Type: membrane.TypeWorking, Text: 1, CreatedAt: week},
				{ID: "w1", Type: membrane.TypeWorking, Text: 1, CreatedAt: week},
				{ID: "w0", Type: membrane.TypeWorking, Text: 1, CreatedAt: week.Add(-time.Second)},
			},
			want: []want{
				// equal scores: working first, then the newest, then by id
				{"w1", 0.7, 1, 1, 0, 0.5, 0, nil},
				{"w2", 0.7, 1, 1, 0, 0.5, 0, nil},
				{"w0", 0.7, 1, 1, 0, membrane.Recency(week.Add(-time.Second), now), 0, nil},
				{"s1", 0.7, 1, 1, 0, 0.5, 0, nil},
				{"e2", 0.7, 1, 1, 0, 0.5, 0, nil},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := membrane.Rank(tt.q, tt.cands, now)
			if len(hits) != len(tt.want) {
				t.Fatalf("%d hits, want %d", len(hits), len(tt.want))
			}
			for i, w := range tt.want {
				h := hits[i]
				p := h.Parts
				if h.ID != w.id || !near(h.Score, w.score) || !near(p.Relevance, w.relevance) || !near(p.Text, w.text) ||
					!near(p.Salience, w.sal) || !near(p.Recency, w.recency) || !near(p.Confidence, w.conf) ||
					(p.Vector == nil) != (w.vector == nil) || (p.Vector != nil && !near(*p.Vector, *w.vector)) {
					t.Errorf("hit %d = %s score %v parts %+v (vector %v), want %+v", i, h.ID, h.Score, p, p.Vector, w)
				}
			}
		})
	}
}

func TestFinishSelectsAmongCompetenceAndPlans(t *testing.T) {
	now := time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)
	skill := func(id string, conf float64) *membrane.Record {
		return &membrane.Record{ID: id, Type: membrane.TypeCompetence, Confidence: conf,
			Lifecycle: membrane.Lifecycle{LastReinforcedAt: now}, Payload: &membrane.CompetencePayload{SkillName: id}}
	}
	fact := &membrane.Record{ID: "fact", Type: membrane.TypeSemantic}
	cands := []membrane.Candidate{
		{ID: "fact", Type: membrane.TypeSemantic, Text: 10, Salience: 1, Confidence: 1, CreatedAt: now, Loaded: fact},
		{ID: "deploy", Type: membrane.TypeCompetence, Text: 5, Salience: 1, Confidence: 1, CreatedAt: now, Loaded: skill("deploy", 1)},
		{ID: "rollback", Type: membrane.TypeCompetence, Text: 1, Salience: 1, Confidence: 0.4, CreatedAt: now, Loaded: skill("rollback", 0.4)},
	}
	q := membrane.RetrieveQuery{Terms: []string{"deploy"}, Limit: 2}
	// Text relative to 20, the best text score of all candidates (of which
	// these are the best few).
	r, missing := membrane.Finish(q, cands, 20, 1/membrane.Fusion.Total(q), 0.7, now)
	if len(missing) != 0 || len(r.Hits) != 2 || r.Hits[0].ID != "fact" || r.Hits[1].ID != "deploy" || r.Hits[0].Record != fact || r.Hits[0].Parts.Text != 0.5 || !near(r.Hits[0].Parts.Relevance, 0.5) {
		t.Fatalf("hits = %+v, missing %v", r.Hits, missing)
	}
	// Both skills are scored although only one made the hits.
	s := r.Selection
	if len(s.Selected) != 2 || s.Selected[0].ID != "deploy" || s.Selected[1].ID != "rollback" {
		t.Fatalf("selection = %+v", s)
	}
	// deploy (1 + 0.5 + 1)/3, rollback (0.4 + 0.5 + 1)/3
	best, second := 2.5/3, 1.9/3
	if !near(s.Scores[0].Score, best) || !near(s.Scores[1].Score, second) || !near(s.Confidence, (best-second)/best) || !s.NeedsMore {
		t.Errorf("selection scores %+v confidence %v needsMore %v", s.Scores, s.Confidence, s.NeedsMore)
	}
	if r.Weights != membrane.QueryWeights || r.VectorUsed {
		t.Errorf("weights %+v vector %v", r.Weights, r.VectorUsed)
	}

	// Records not loaded with their candidates are reported missing, then
	// completed; one that cannot be loaded is left out.
	cands[0].Loaded, cands[2].Loaded = nil, nil
	r, missing = membrane.Finish(q, cands, 20, 1/membrane.Fusion.Total(q), 0.7, now)
	if !reflect.DeepEqual(missing, []string{"rollback", "fact"}) || r.Hits[0].Record != nil {
		t.Fatalf("missing %v", missing)
	}
	r.Complete(map[string]*membrane.Record{"rollback": skill("rollback", 0.4)}, 0.7, now)
	if len(r.Hits) != 1 || r.Hits[0].ID != "deploy" || len(r.Selection.Selected) != 2 || !near(r.Selection.Scores[1].Score, second) {
		t.Errorf("completed: hits %+v selection %+v", r.Hits, r.Selection)
	}
}

// TestContextScore pins the context signal: a seed's text score passes to
// the records after it at full weight and to those before it at
// ContextBefore (1/2), halved again two hops away, summed over the seeds
// and divided by ContextNorm = (1 + 1/2)(1 + 1/2) = 2.25, capped at 1.
func TestContextScore(t *testing.T) {
	type sn = membrane.SessionNeighbour
	tests := []struct {
		name string
		ns   []sn
		want float64
	}{
		{"no seed next to it", nil, 0},
		{"right after the best match", []sn{{T: 1, Hops: 1, After: true}}, 1 / 2.25},
		{"right before the best match", []sn{{T: 1, Hops: 1}}, 0.5 / 2.25},
		{"two after", []sn{{T: 1, Hops: 2, After: true}}, 0.5 / 2.25},
		{"two before", []sn{{T: 1, Hops: 2}}, 0.25 / 2.25},
		{"after a weaker match", []sn{{T: 0.4, Hops: 1, After: true}}, 0.4 / 2.25},
		{"three hops pass nothing", []sn{{T: 1, Hops: 3, After: true}}, 0},
		{"between two matches", []sn{{T: 1, Hops: 1, After: true}, {T: 0.6, Hops: 1}}, (1 + 0.3) / 2.25},
		{"all four the best match", []sn{{T: 1, Hops: 1, After: true}, {T: 1, Hops: 1}, {T: 1, Hops: 2, After: true}, {T: 1, Hops: 2}}, 1},
		{"scores out of range are clamped", []sn{{T: 7, Hops: 1, After: true}, {T: -1, Hops: 1}}, 1 / 2.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := membrane.ContextScore(tt.ns); !near(got, tt.want) {
				t.Errorf("ContextScore = %v, want %v", got, tt.want)
			}
		})
	}
	if !near(membrane.ContextNorm, 2.25) {
		t.Errorf("ContextNorm = %v, want 2.25", membrane.ContextNorm)
	}
}

// TestSeedScore pins how well a match matches for its graph neighbours:
// its relative text score and its vector similarity weighed 1 to 2 (the
// fusion weights), so a match by meaning alone passes on two thirds of
// what a match by both passes.
func TestSeedScore(t *testing.T) {
	tests := []struct {
		name         string
		text, vector float64
		want         float64
	}{
		{"the best text match, no vector", 1, 0, 1.0 / 3},
		{"a match by meaning alone", 0, 0.6, 1.2 / 3},
		{"both", 0.5, 0.75, 2.0 / 3},
		{"the best of both", 1, 1, 1},
		{"a negative similarity counts as none", 0.3, -0.4, 0.1},
		{"out of range is clamped", 2, 1.5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := membrane.SeedScore(tt.text, tt.vector); !near(got, tt.want) {
				t.Errorf("SeedScore(%v, %v) = %v, want %v", tt.text, tt.vector, got, tt.want)
			}
		})
	}
}

// TestDiversify: each place goes to the best score less SessionRedundancy
// per better hit of the same session; hits of no session are never
// penalised, and the adjusted scores still decrease down the list.
func TestDiversify(t *testing.T) {
	r := membrane.SessionRedundancy
	hit := func(id, session string, score float64) membrane.Hit {
		return membrane.Hit{Candidate: membrane.Candidate{ID: id, Session: session}, Score: score}
	}
	tests := []struct {
		name string
		in   []membrane.Hit
		want []string
	}{
		{"empty", nil, nil},
		{"one session keeps its order", []membrane.Hit{hit("a", "s", 0.9), hit("b", "s", 0.8), hit("c", "s", 0.7)}, []string{"a", "b", "c"}},
		{"a close hit of another session moves up",
			[]membrane.Hit{hit("a", "s", 0.9), hit("b", "s", 0.9-r/2), hit("c", "t", 0.9-r*0.9)}, []string{"a", "c", "b"}},
		{"a far hit of another session stays below",
			[]membrane.Hit{hit("a", "s", 0.9), hit("b", "s", 0.8), hit("c", "t", 0.8-2*r)}, []string{"a", "b", "c"}},
		{"the third of a session pays twice",
			[]membrane.Hit{hit("a", "s", 0.9), hit("b", "s", 0.9), hit("c", "s", 0.9), hit("d", "t", 0.9-1.5*r)}, []string{"a", "b", "d", "c"}},
		{"no session is never penalised",
			[]membrane.Hit{hit("a", "", 0.9), hit("b", "", 0.89), hit("c", "t", 0.88)}, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := membrane.Diversify(tt.in)
			var ids []string
			for i, h := range got {
				ids = append(ids, h.ID)
				if i > 0 && h.Score > got[i-1].Score {
					t.Errorf("score rises at %d: %v after %v", i, h.Score, got[i-1].Score)
				}
				orig := tt.in[slices.IndexFunc(tt.in, func(x membrane.Hit) bool { return x.ID == h.ID })]
				if !near(h.Score+h.Parts.Redundancy, orig.Score) {
					t.Errorf("%s: score %v + redundancy %v != %v", h.ID, h.Score, h.Parts.Redundancy, orig.Score)
				}
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("order %v, want %v", ids, tt.want)
			}
		})
	}
}
