package graph_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// word returns a word unique to this run: full-text matches of a query made
// of such words are only the test's own records, whatever else the shared
// database holds.
func word() string {
	return "w" + strings.ReplaceAll(membrane.NewID()[24:], "-", "")
}

// stored writes records straight into the store as the system, for
// fixtures that need past timestamps or lifecycles the API does not set,
// and waits until full-text search sees them.
func stored(t testing.TB, c *client, recs ...*membrane.Record) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("fixture"))
	ins := make([]*membrane.Ingested, len(recs))
	for i, r := range recs {
		ins[i] = &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "fixture", "fixture", r.CreatedAt)}
	}
	if _, err := c.DB.CreateRecords(ctx, nil, ins); err != nil {
		t.Fatal(err)
	}
	awaitSearch(t, c)
}

func awaitSearch(t testing.TB, c *client) {
	t.Helper()
	if err := c.DB.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// factRecord builds a semantic record created at at in scope.
func factRecord(t testing.TB, scope, text string, at time.Time, opts ...func(*membrane.Record)) *membrane.Record {
	t.Helper()
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope,
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: text, Predicate: "is", Object: "noted"}}}, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(r)
	}
	// A fixture's salience is the salience at its decay anchor.
	r.Lifecycle.BaseSalience = r.Salience
	return r
}

type scoreParts struct {
	Relevance, Text, Salience, Recency, Confidence float64
	Vector                                         *float64
}

type hitOut struct {
	Score  float64
	Parts  scoreParts
	Record struct {
		ID, Type, Status, Scope, Sensitivity string
		Redacted                             bool
	}
}

type retrieved struct {
	Retrieve struct {
		Hits      []hitOut
		Selection struct {
			Selected   []struct{ ID string }
			Confidence float64
			NeedsMore  bool
			Scores     []struct {
				RecordID                                   string
				Score, Applicability, SuccessRate, Recency float64
			}
		}
		Weights    struct{ Relevance, Salience, Recency, Confidence float64 }
		VectorUsed bool
	}
}

const retrieveQ = `query($in: RetrieveInput!) { retrieve(input: $in) {
  hits { score parts { relevance text vector salience recency confidence } record { id type status scope sensitivity redacted } }
  selection { selected { id } confidence needsMore scores { recordId score applicability successRate recency } }
  weights { relevance salience recency confidence } vectorUsed } }`

func (c *client) retrieve(in map[string]any) retrieved {
	c.T.Helper()
	var out retrieved
	c.Do(retrieveQ, map[string]any{"in": in}, &out)
	return out
}

func hitIDs(hits []hitOut) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Record.ID
	}
	return out
}

func reader(actor string, max membrane.Sensitivity, scopes ...string) membrane.Principal {
	return membrane.Principal{Actor: actor + "-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: max, Scopes: scopes}
}

func writer(actor string, max membrane.Sensitivity, scopes ...string) membrane.Principal {
	p := reader(actor, max, scopes...)
	p.Role = membrane.RoleWriter
	return p
}

// TestRetrieveRanking checks the order and score parts of a fixture whose
// records differ in one ranking signal at a time.
func TestRetrieveRanking(t *testing.T) {
	scope := neo4jtest.Scope(t)
	rd := reader("reader", membrane.SensitivityMedium, scope)
	c := newClient(t, rd)
	a, b := word(), word()
	now := time.Now().UTC()
	both := a + " " + b
	top := factRecord(t, scope, both, now)
	lowConf := factRecord(t, scope, both, now, func(r *membrane.Record) { r.Confidence = 0.5 })
	lowSal := factRecord(t, scope, both, now, func(r *membrane.Record) { r.Salience = 0.2 })
	old := factRecord(t, scope, both, now.Add(-30*24*time.Hour), func(r *membrane.Record) { r.Lifecycle.LastReinforcedAt = now })
	decayed := factRecord(t, scope, both, now, func(r *membrane.Record) {
		r.Lifecycle.HalfLifeSeconds = 3600
		r.Lifecycle.LastReinforcedAt = now.Add(-10 * time.Hour)
	})
	oneWord := factRecord(t, scope, a+" other words here", now)
	retracted := factRecord(t, scope, both, now, func(r *membrane.Record) { r.Status = membrane.StatusRetracted; r.Salience = 0 })
	unrelated := factRecord(t, scope, word(), now)
	stored(t, c, top, lowConf, lowSal, old, decayed, oneWord, retracted, unrelated)
	rc := c.as(rd.Actor)

	got := rc.retrieve(map[string]any{"query": both})
	// Recency takes part only in a query asking for the latest: old ties
	// with top and follows it as the older.
	want := []string{top.ID, old.ID, lowConf.ID, lowSal.ID, decayed.ID, oneWord.ID}
	if ids := hitIDs(got.Retrieve.Hits); !slices.Equal(ids, want) {
		t.Fatalf("order\n got %v\nwant %v", ids, want)
	}
	w := got.Retrieve.Weights
	if w.Relevance != 0.7 || w.Salience != 0.2 || w.Recency != 0 || w.Confidence != 0.1 || got.Retrieve.VectorUsed {
		t.Errorf("weights %+v vector %v", w, got.Retrieve.VectorUsed)
	}
	near := func(x, y, tol float64) bool { return math.Abs(x-y) <= tol }
	checks := []struct {
		name                   string
		rec                    *membrane.Record
		text, sal, rec_, conf_ float64
	}{
		{"top", top, 1, 1, 1, 1},
		{"old", old, 1, 1, math.Exp2(-30.0 / 7), 1},
		{"low confidence", lowConf, 1, 1, 1, 0.5},
		{"low salience", lowSal, 1, 0.2, 1, 1},
		{"decayed", decayed, 1, math.Exp2(-10), 1, 1},
	}
	for i, ck := range checks {
		h := got.Retrieve.Hits[i]
		p := h.Parts
		score := 0.7*p.Relevance + 0.2*p.Salience + 0.1*p.Confidence
		if !near(p.Text, ck.text, 1e-9) || !near(p.Relevance, p.Text, 1e-9) || !near(p.Salience, ck.sal, 1e-4) ||
			!near(p.Recency, ck.rec_, 1e-4) || !near(p.Confidence, ck.conf_, 1e-9) || !near(h.Score, score, 1e-9) || p.Vector != nil {
			t.Errorf("%s: score %v parts %+v", ck.name, h.Score, p)
		}
	}
	if p := got.Retrieve.Hits[5].Parts; !(p.Text > 0 && p.Text < 1) {
		t.Errorf("one-word match: text %v, want in (0,1)", p.Text)
	}

	t.Run("recency when the query asks for the latest", func(t *testing.T) {
		got := rc.retrieve(map[string]any{"query": "the latest " + both})
		w := got.Retrieve.Weights
		if w.Relevance != 0.6 || w.Salience != 0.2 || w.Recency != 0.1 || w.Confidence != 0.1 {
			t.Errorf("weights %+v", w)
		}
		ids := hitIDs(got.Retrieve.Hits)
		if i, j := slices.Index(ids, old.ID), slices.Index(ids, lowSal.ID); i < 0 || j < 0 || i < j {
			t.Errorf("the 30-day-old match at %d, above the newer low-salience one at %d: %v", i, j, ids)
		}
	})

	t.Run("retracted only when asked for", func(t *testing.T) {
		got := rc.retrieve(map[string]any{"query": both, "includeRetracted": true, "limit": 20})
		if ids := hitIDs(got.Retrieve.Hits); !slices.Contains(ids, retracted.ID) || len(ids) != 7 {
			t.Fatalf("hits %v", ids)
		}
	})
	t.Run("minSalience applies to effective salience", func(t *testing.T) {
		got := rc.retrieve(map[string]any{"query": both, "minSalience": 0.5})
		if ids := hitIDs(got.Retrieve.Hits); slices.Contains(ids, lowSal.ID) || slices.Contains(ids, decayed.ID) || len(ids) != 4 {
			t.Fatalf("hits %v", ids)
		}
	})
	t.Run("limit", func(t *testing.T) {
		got := rc.retrieve(map[string]any{"query": both, "limit": 2})
		if ids := hitIDs(got.Retrieve.Hits); !slices.Equal(ids, want[:2]) {
			t.Fatalf("hits %v", ids)
		}
	})
	t.Run("one read transaction", func(t *testing.T) {
		before := c.DB.TxCount()
		rc.retrieve(map[string]any{"query": both})
		if n := c.DB.TxCount() - before; n != 1 {
			t.Fatalf("transactions = %d, want 1", n)
		}
	})
}

// TestRetrieveEffectiveSalienceMatchesDomain checks the effective salience
// computed in Cypher (and filtered on there) against the domain's pure
// function, for every lifecycle rule.
func TestRetrieveEffectiveSalienceMatchesDomain(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	w := word()
	now := time.Now().UTC()
	h := func(n float64) time.Duration { return time.Duration(n * float64(time.Hour)) }
	lc := func(f func(*membrane.Record)) *membrane.Record { return factRecord(t, scope, w, now.Add(-h(48)), f) }
	recs := []*membrane.Record{
		lc(func(r *membrane.Record) {
			r.Lifecycle.HalfLifeSeconds = 86400
			r.Lifecycle.LastReinforcedAt = now.Add(-h(24))
		}),
		lc(func(r *membrane.Record) {
			r.Lifecycle.Pinned = true
			r.Lifecycle.HalfLifeSeconds = 60
			r.Salience = 0.7
		}),
		lc(func(r *membrane.Record) { r.Lifecycle.MaxAgeSeconds = 3600 }),
		lc(func(r *membrane.Record) { r.Lifecycle.MaxAgeSeconds = 7 * 86400; r.Lifecycle.HalfLifeSeconds = 86400 }),
		lc(func(r *membrane.Record) {
			r.Lifecycle.Curve = membrane.DecayLinear
			r.Lifecycle.HalfLifeSeconds = 86400
			r.Lifecycle.LastReinforcedAt = now.Add(-h(24))
		}),
		lc(func(r *membrane.Record) {
			r.Lifecycle.Curve = membrane.DecayLinear
			r.Lifecycle.HalfLifeSeconds = 3600
			r.Lifecycle.MinSalience = 0.1
		}),
		// Linear and exponential decay agree at one half-life and once
		// both are at the floor (the two cases above); a quarter of the
		// linear span in, they do not (0.75 against 0.707).
		lc(func(r *membrane.Record) {
			r.Lifecycle.Curve = membrane.DecayLinear
			r.Lifecycle.HalfLifeSeconds = 86400
			r.Lifecycle.LastReinforcedAt = now.Add(-h(12))
		}),
		lc(func(r *membrane.Record) { r.Lifecycle.HalfLifeSeconds = 3600; r.Lifecycle.MinSalience = 0.3 }),
		lc(func(r *membrane.Record) {
			r.Salience = 0.05
			r.Lifecycle.HalfLifeSeconds = 3600
			r.Lifecycle.MinSalience = 0.3
		}),
		// A decay anchor in the future (clock skew): no decay, and no
		// growth either, below the clamp at 1 that would hide it.
		lc(func(r *membrane.Record) {
			r.Salience = 0.5
			r.Lifecycle.HalfLifeSeconds = 86400
			r.Lifecycle.LastReinforcedAt = now.Add(h(1))
		}),
	}
	// As a decay sweep leaves a record: the stored salience decayed, the
	// base the salience at the anchor, which decay starts from.
	swept := lc(func(r *membrane.Record) {
		r.Lifecycle.HalfLifeSeconds = 86400
		r.Lifecycle.LastReinforcedAt = now.Add(-h(24))
	})
	swept.Salience = 0.4
	recs = append(recs, swept)
	stored(t, c, recs...)
	got := c.retrieve(map[string]any{"query": w, "limit": 20})
	bySal := map[string]float64{}
	for _, hit := range got.Retrieve.Hits {
		bySal[hit.Record.ID] = hit.Parts.Salience
	}
	for i, r := range recs {
		want := membrane.EffectiveSalience(r.Lifecycle.BaseSalience, r.Lifecycle, r.CreatedAt, time.Now())
		if g, ok := bySal[r.ID]; !ok || math.Abs(g-want) > 1e-4 {
			t.Errorf("record %d (%+v): salience %v (found %v), domain says %v", i, r.Lifecycle, g, ok, want)
		}
	}
}

func TestRetrieveAsOf(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	w := word()
	now := time.Now().UTC()
	early := factRecord(t, scope, w, now.Add(-2*time.Hour))
	stored(t, c, early)
	c.Do(`mutation($id: ID!) { retract(id: $id) { id } }`, map[string]any{"id": early.ID}, nil)
	var later struct{ CreateRecord struct{ ID string } }
	c.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": map[string]any{
		"type": "SEMANTIC", "scope": scope, "payload": map[string]any{"semantic": map[string]any{"subject": w, "predicate": "is"}}}}, &later)
	awaitSearch(t, c)

	if ids := hitIDs(c.retrieve(map[string]any{"query": w}).Retrieve.Hits); !slices.Equal(ids, []string{later.CreateRecord.ID}) {
		t.Errorf("now: %v", ids)
	}
	then := c.retrieve(map[string]any{"query": w, "asOf": now.Add(-time.Hour).Format(time.RFC3339Nano)})
	if ids := hitIDs(then.Retrieve.Hits); !slices.Equal(ids, []string{early.ID}) || then.Retrieve.Hits[0].Record.Status != "ACTIVE" {
		t.Errorf("an hour ago: %+v", then.Retrieve.Hits)
	} else if p := then.Retrieve.Hits[0].Parts; math.Abs(p.Salience-membrane.EffectiveSalience(1, early.Lifecycle, early.CreatedAt, now.Add(-time.Hour))) > 1e-6 ||
		math.Abs(p.Recency-membrane.Recency(early.CreatedAt, now.Add(-time.Hour))) > 1e-6 {
		t.Errorf("an hour ago: decay and recency not measured then: %+v", p)
	}
	all := c.retrieve(map[string]any{"query": w, "includeRetracted": true})
	if len(all.Retrieve.Hits) != 2 {
		t.Errorf("with retracted: %+v", all.Retrieve.Hits)
	}

	// A record nothing changed since: its salience an hour ago is decayed
	// once, from its anchor to then (a short half-life makes a second
	// decay show).
	w2 := word()
	steady := factRecord(t, scope, w2, now.Add(-2*time.Hour), func(r *membrane.Record) { r.Lifecycle.HalfLifeSeconds = 3600 })
	stored(t, c, steady)
	awaitSearch(t, c)
	past := c.retrieve(map[string]any{"query": w2, "asOf": now.Add(-time.Hour).Format(time.RFC3339Nano)})
	want := membrane.EffectiveSalience(steady.Lifecycle.BaseSalience, steady.Lifecycle, steady.CreatedAt, now.Add(-time.Hour))
	if len(past.Retrieve.Hits) != 1 || math.Abs(past.Retrieve.Hits[0].Parts.Salience-want) > 1e-6 {
		t.Errorf("unchanged record an hour ago: %+v, want salience %v", past.Retrieve.Hits, want)
	}
}

func TestRetrieveLayersAndSelection(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	w := word()
	in := []any{
		map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{
			"timeline": []any{map[string]any{"t": ts, "eventKind": "deploy", "ref": "r1", "summary": w + " went out"}}}}},
		map[string]any{"type": "WORKING", "scope": scope, "payload": map[string]any{"working": map[string]any{
			"threadId": "t1", "state": "EXECUTING", "contextSummary": w + " in progress"}}},
		map[string]any{"type": "COMPETENCE", "scope": scope, "confidence": 0.9, "payload": map[string]any{"competence": map[string]any{
			"skillName": w + " deploy", "performance": map[string]any{"successCount": 9, "failureCount": 1, "successRate": 0.9}}}},
		map[string]any{"type": "PLAN_GRAPH", "scope": scope, "confidence": 0.6, "payload": map[string]any{"planGraph": map[string]any{
			"planId": "p1", "intent": w + " release", "metrics": map[string]any{"failureRate": 0.5, "executionCount": 4}}}},
	}
	var created struct{ IngestBatch []struct{ ID string } }
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": in}, &created)
	awaitSearch(t, c)
	ep, wk, sk, pl := created.IngestBatch[0].ID, created.IngestBatch[1].ID, created.IngestBatch[2].ID, created.IngestBatch[3].ID

	got := c.retrieve(map[string]any{"query": w})
	if ids := hitIDs(got.Retrieve.Hits); len(ids) != 4 {
		t.Fatalf("hits %v", ids)
	}
	s := got.Retrieve.Selection
	// Competence: (0.9 + 0.9 + ~1) / 3; plan: (0.6 + 0.5 + ~1) / 3.
	if len(s.Selected) != 2 || s.Selected[0].ID != sk || s.Selected[1].ID != pl ||
		math.Abs(s.Scores[0].Score-2.8/3) > 1e-4 || math.Abs(s.Scores[1].Score-2.1/3) > 1e-4 ||
		math.Abs(s.Confidence-(2.8-2.1)/2.8) > 1e-4 || !s.NeedsMore || s.Scores[0].SuccessRate != 0.9 || s.Scores[1].SuccessRate != 0.5 {
		t.Errorf("selection %+v", s)
	}
	only := c.retrieve(map[string]any{"query": w, "memoryTypes": []any{"EPISODIC", "WORKING"}})
	if ids := hitIDs(only.Retrieve.Hits); len(ids) != 2 || !slices.Contains(ids, ep) || !slices.Contains(ids, wk) || len(only.Retrieve.Selection.Selected) != 0 {
		t.Errorf("episodic and working only: %v, selection %+v", ids, only.Retrieve.Selection)
	}
	// Without a query: browse by salience, recency and confidence, in the
	// scopes asked for.
	browse := c.retrieve(map[string]any{"limit": 10, "scopes": []any{scope}})
	if len(browse.Retrieve.Hits) != 4 || browse.Retrieve.Weights.Relevance != 0 || browse.Retrieve.Hits[0].Parts.Relevance != 0 {
		t.Errorf("browse %+v", browse.Retrieve)
	}
	// The working record (salience 1, confidence 1, half-life a day) leads;
	// the episodic one (half-life an hour, confidence 0.8) is not far behind.
	if browse.Retrieve.Hits[0].Record.ID != wk {
		t.Errorf("browse order %v", hitIDs(browse.Retrieve.Hits))
	}
}

func TestRetrieveBadInput(t *testing.T) {
	c := newClient(t)
	for _, tt := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"limit": 0}, "input.limit"},
		{map[string]any{"limit": 101}, "input.limit"},
		{map[string]any{"minSalience": -0.5}, "input.minSalience"},
		{map[string]any{"query": "?!"}, "input.query"},
		{map[string]any{"query": strings.Repeat("x", membrane.MaxQueryBytes+1)}, "input.query"},
	} {
		errs := c.Fail("BAD_USER_INPUT", retrieveQ, map[string]any{"in": tt.in})
		if f := fieldsOf(errs); len(f) == 0 || f[0] != tt.field {
			t.Errorf("%v: fields %v, want %s", tt.in, f, tt.field)
		}
	}
	for _, tt := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"rootLimit": 0}, "input.rootLimit"},
		{map[string]any{"nodeLimit": 1001}, "input.nodeLimit"},
		{map[string]any{"edgeLimit": -1}, "input.edgeLimit"},
		{map[string]any{"maxHops": 6}, "input.maxHops"},
	} {
		errs := c.Fail("BAD_USER_INPUT", graphQ, map[string]any{"in": tt.in})
		if f := fieldsOf(errs); len(f) == 0 || f[0] != tt.field {
			t.Errorf("%v: fields %v, want %s", tt.in, f, tt.field)
		}
	}
	c.Fail("BAD_USER_INPUT", retrieveQ, map[string]any{"in": map[string]any{"memoryTypes": []any{"NOPE"}}})
}

func fieldsOf(errs []gqltest.Error) []string {
	var out []string
	for _, e := range errs {
		fs, _ := e.Extensions["fields"].([]any)
		for _, f := range fs {
			m, _ := f.(map[string]any)
			out = append(out, fmt.Sprint(m["field"]))
		}
	}
	return out
}

// TestRetrieveScansFurtherForNarrowCallers: when the best full-text matches
// are all outside the caller's view, retrieval scans further into the index
// instead of returning too little.
func TestRetrieveScansFurtherForNarrowCallers(t *testing.T) {
	in, out := neo4jtest.Scope(t), neo4jtest.Scope(t)
	rd := reader("narrow", membrane.SensitivityHyper, in)
	c := newClient(t, rd)
	w := word()
	now := time.Now().UTC()
	var recs []*membrane.Record
	for range 150 { // better matches (the word thrice, short text), all out of view
		recs = append(recs, factRecord(t, out, w+" "+w+" "+w, now))
	}
	var mine []string
	for i := range 3 {
		r := factRecord(t, in, fmt.Sprintf("%s among many other words of a longer text number %d", w, i), now)
		recs = append(recs, r)
		mine = append(mine, r.ID)
	}
	stored(t, c, recs...)
	got := c.as(rd.Actor).retrieve(map[string]any{"query": w, "limit": 3})
	ids := hitIDs(got.Retrieve.Hits)
	slices.Sort(ids)
	slices.Sort(mine)
	if !slices.Equal(ids, mine) {
		t.Fatalf("hits %v, want the caller's %v", ids, mine)
	}
	// An admin gets the better matches.
	if all := c.retrieve(map[string]any{"query": w, "limit": 3}); slices.Contains(mine, all.Retrieve.Hits[0].Record.ID) {
		t.Errorf("admin's best hit is a weaker match")
	}
}
