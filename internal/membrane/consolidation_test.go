package membrane_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// episode builds an episodic record created at now.
func episode(t *testing.T, scope string, sens membrane.Sensitivity, outcome *membrane.OutcomeStatus, events []string, tools ...string) *membrane.Record {
	t.Helper()
	ep := &membrane.EpisodicPayload{Outcome: outcome}
	for _, e := range events {
		ep.Timeline = append(ep.Timeline, membrane.TimelineEvent{T: now, EventKind: "deploy", Ref: "r", Summary: e})
	}
	for i, tool := range tools {
		n := membrane.ToolNode{ID: string(rune('a' + i)), Tool: tool}
		if i == 2 {
			n.DependsOn = []string{"a", "missing"}
		}
		ep.ToolGraph = append(ep.ToolGraph, n)
	}
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope, Sensitivity: &sens,
		Tags: []string{"ops"}, Payload: membrane.PayloadInput{Episodic: ep}}, now)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var success = new(membrane.OutcomeSuccess)

func TestCompressedBase(t *testing.T) {
	o := membrane.DefaultConsolidationOptions()
	ep := func(f func(*membrane.Record)) *membrane.Record {
		r := &membrane.Record{Type: membrane.TypeEpisodic, CreatedAt: now, Lifecycle: membrane.Lifecycle{BaseSalience: 0.8}}
		if f != nil {
			f(r)
		}
		return r
	}
	day := 24 * time.Hour
	tests := []struct {
		name    string
		r       *membrane.Record
		at      time.Duration
		base    float64
		windows int64
		ok      bool
	}{
		{"younger than a window", ep(nil), day - time.Nanosecond, 0.8, 0, false},
		{"one window", ep(nil), day, 0.4, 1, true},
		{"three windows at once", ep(nil), 3*day + time.Hour, 0.1, 3, true},
		{"down to the floor", ep(nil), 10 * day, 0.05, 10, true},
		{"window already done", ep(func(r *membrane.Record) { r.Lifecycle.Compressions = 1 }), day + time.Hour, 0.8, 1, false},
		{"the next window", ep(func(r *membrane.Record) { r.Lifecycle.Compressions = 1; r.Lifecycle.BaseSalience = 0.4 }), 2 * day, 0.2, 2, true},
		{"at the floor", ep(func(r *membrane.Record) { r.Lifecycle.BaseSalience = 0.05 }), 5 * day, 0.05, 0, false},
		{"pinned", ep(func(r *membrane.Record) { r.Lifecycle.Pinned = true }), 5 * day, 0.8, 0, false},
		{"not episodic", ep(func(r *membrane.Record) { r.Type = membrane.TypeSemantic }), 5 * day, 0.8, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, w, ok := o.CompressedBase(tt.r, now.Add(tt.at))
			if ok != tt.ok || w != tt.windows || math.Abs(base-tt.base) > 1e-12 {
				t.Fatalf("CompressedBase = %v, %d, %v; want %v, %d, %v", base, w, ok, tt.base, tt.windows, tt.ok)
			}
		})
	}
}

func TestEpisodeFacts(t *testing.T) {
	got := membrane.EpisodeFacts(episode(t, "s", membrane.SensitivityLow, success, []string{"v2 shipped", "", "v2 shipped", "rollback tested"}))
	want := []membrane.FactKey{
		{Scope: "s", Subject: "deploy", Predicate: "observed_in", Object: "v2 shipped"},
		{Scope: "s", Subject: "deploy", Predicate: "observed_in", Object: "rollback tested"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("EpisodeFacts = %+v", got)
	}
	if f := membrane.EpisodeFacts(episode(t, "s", membrane.SensitivityLow, new(membrane.OutcomeFailure), []string{"x"})); f != nil {
		t.Fatalf("a failed episode yields %v", f)
	}
}

func TestExtractFacts(t *testing.T) {
	p := membrane.DefaultPolicy()
	a := episode(t, "s", membrane.SensitivityHigh, success, []string{"v2 shipped", "new"})
	a.Confidence = 0.6
	b := episode(t, "s", membrane.SensitivityLow, success, []string{"v2 shipped", "new", "contested"})
	at := now.Add(time.Hour)
	fact := func(obj string, status membrane.RevisionStatus) *membrane.Record {
		in := membrane.RecordInput{Type: membrane.TypeSemantic, Scope: new("s"), Salience: new(0.5),
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "deploy", Predicate: "observed_in", Object: obj}}}
		r, err := p.BuildRecord(in, now)
		if err != nil {
			t.Fatal(err)
		}
		r.Status = status
		return r
	}
	shipped, disputed := fact("v2 shipped", membrane.StatusActive), fact("contested", membrane.StatusContested)
	existing := map[membrane.FactKey]*membrane.Record{
		{Scope: "s", Subject: "deploy", Predicate: "observed_in", Object: "v2 shipped"}: shipped,
		{Scope: "s", Subject: "deploy", Predicate: "observed_in", Object: "contested"}:  disputed,
	}
	c, err := p.ExtractFacts([]*membrane.Record{a, b}, existing, at)
	if err != nil {
		t.Fatal(err)
	}
	// "new" is created once, from a, and linked to both episodes.
	if len(c.Creates) != 1 {
		t.Fatalf("created %d facts, want 1", len(c.Creates))
	}
	n := c.Creates[0]
	np := n.Payload.(*membrane.SemanticPayload)
	if np.Object != "new" || n.Scope != "s" || n.Sensitivity != membrane.SensitivityHigh || n.Confidence != 0.6 ||
		!slices.Contains(n.Tags, "consolidated") || !slices.Contains(n.Tags, "ops") || n.Lifecycle.HalfLifeSeconds != 30*86400 ||
		np.Evidence[0].SourceID != a.ID {
		t.Fatalf("created fact = %+v %+v", n, np)
	}
	// The active fact is reinforced once, the contested one only linked.
	if len(c.Updates) != 1 || c.Updates[0].ID != shipped.ID || c.Updates[0].Lifecycle.BaseSalience <= 0.5-1e-9 {
		t.Fatalf("updates = %+v", c.Updates)
	}
	edges := map[string]int{}
	for _, e := range c.Edges {
		if e.Predicate != membrane.PredDerivedFrom {
			t.Fatalf("edge %+v", e)
		}
		edges[e.SourceID]++
	}
	if edges[n.ID] != 2 || edges[shipped.ID] != 2 || edges[disputed.ID] != 1 {
		t.Fatalf("DERIVED_FROM edges per fact = %v", edges)
	}
	// A later batch of the same run (same instant) does not reinforce again.
	again, err := p.ExtractFacts([]*membrane.Record{a}, map[membrane.FactKey]*membrane.Record{
		{Scope: "s", Subject: "deploy", Predicate: "observed_in", Object: "v2 shipped"}: c.Updates[0],
		{Scope: "s", Subject: "deploy", Predicate: "observed_in", Object: "new"}:        n,
	}, at)
	if err != nil || len(again.Updates) != 0 || len(again.Creates) != 0 {
		t.Fatalf("second batch at one instant: %+v, %v", again, err)
	}
}

func TestExtractCompetence(t *testing.T) {
	p := membrane.DefaultPolicy()
	o := membrane.DefaultConsolidationOptions()
	src := func(scope string, sens membrane.Sensitivity) membrane.CompetenceSource {
		s, ok := membrane.NewCompetenceSource(episode(t, scope, sens, success, nil, "make", "git"))
		if !ok {
			t.Fatal("no competence source")
		}
		return s
	}
	a, b := src("alpha", membrane.SensitivityLow), src("beta", membrane.SensitivityHigh)
	if a.Signature() != "git+make" {
		t.Fatalf("signature = %q, want sorted tools", a.Signature())
	}
	if c, err := p.ExtractCompetence([]membrane.CompetenceSource{a}, nil, o, now); c != nil || err != nil {
		t.Fatalf("one episode made a competence: %+v, %v", c, err)
	}
	c, err := p.ExtractCompetence([]membrane.CompetenceSource{a, b}, nil, o, now)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Creates[0]
	cp := n.Payload.(*membrane.CompetencePayload)
	if cp.SkillName != "skill:git+make" || n.Scope != membrane.MixedScope || n.Sensitivity != membrane.SensitivityHigh ||
		n.Confidence != 0.8 || cp.Performance.SuccessCount != 2 || cp.Performance.SuccessRate != 1 || len(c.Edges) != 2 ||
		c.Audits[0].Rationale != "Extracted from 2 episodic records with pattern git+make; policy: sensitivity=max(high), scope=consolidated:mixed-scope" {
		t.Fatalf("competence = %+v %+v audit %q", n, cp, c.Audits[0].Rationale)
	}
	// Nor does its trail name the sources' scopes, which its readers may
	// not be granted.
	if r := c.Audits[0].Rationale; strings.Contains(r, "alpha") || strings.Contains(r, "beta") {
		t.Fatalf("mixed-scope competence's rationale %q names its sources' scopes", r)
	}
	// A reader of the mixed scope may see neither episode: the provenance
	// names none of them (the gated DERIVED_FROM edges link them).
	if len(n.Provenance.Sources) != 0 {
		t.Fatalf("mixed-scope competence's provenance %+v names its episodes", n.Provenance.Sources)
	}
	if scope, _ := membrane.CompetenceScope([]membrane.CompetenceSource{a, a}); scope != "alpha" {
		t.Fatalf("common scope = %q", scope)
	}
	// New successes of the same skill update the counts and link the
	// sources, reinforcing once per instant.
	later := now.Add(time.Hour)
	u, err := p.ExtractCompetence([]membrane.CompetenceSource{a}, n, o, later)
	if err != nil {
		t.Fatal(err)
	}
	up := u.Updates[0]
	if perf := up.Payload.(*membrane.CompetencePayload).Performance; perf.SuccessCount != 3 || up.Version != 2 ||
		!up.Lifecycle.LastReinforcedAt.Equal(later) || len(u.Edges) != 1 || u.Audits[0].Action != membrane.AuditRevise {
		t.Fatalf("update = %+v perf %+v", up, perf)
	}
	if cp.Performance.SuccessCount != 2 {
		t.Fatal("the update changed the record it was planned from")
	}
	u2, err := p.ExtractCompetence([]membrane.CompetenceSource{b}, up, o, later)
	if err != nil || !u2.Updates[0].Lifecycle.LastReinforcedAt.Equal(later) || u2.Updates[0].Lifecycle.BaseSalience != up.Lifecycle.BaseSalience {
		t.Fatalf("second chunk at one instant reinforced again: %+v, %v", u2, err)
	}
}

func TestExtractPlans(t *testing.T) {
	p := membrane.DefaultPolicy()
	o := membrane.DefaultConsolidationOptions()
	three := episode(t, "s", membrane.SensitivityMedium, new(membrane.OutcomeFailure), []string{"x"}, "checkout", "build", "test")
	two := episode(t, "s", membrane.SensitivityLow, success, nil, "a", "b")
	c, err := p.ExtractPlans([]*membrane.Record{three, two}, o, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Creates) != 1 {
		t.Fatalf("%d plans, want 1 (only the episode with 3 tool calls)", len(c.Creates))
	}
	plan := c.Creates[0]
	pp := plan.Payload.(*membrane.PlanGraphPayload)
	wantEdges := []membrane.PlanEdge{{From: "a", To: "b", Kind: membrane.EdgeControl}, {From: "b", To: "c", Kind: membrane.EdgeControl}, {From: "a", To: "c", Kind: membrane.EdgeData}}
	if !slices.Equal(pp.Edges, wantEdges) || pp.Intent != "deploy" || pp.Metrics.ExecutionCount != 1 || pp.Metrics.FailureRate != 1 ||
		plan.Sensitivity != membrane.SensitivityMedium || plan.Confidence != 0.7 || c.Edges[0].TargetID != three.ID {
		t.Fatalf("plan = %+v %+v", plan, pp)
	}
	steps, links, err := membrane.PlanSubgraph(plan)
	if err != nil || len(steps) != 3 || steps[1].ID != plan.ID+"/b" || steps[1].Op != "build" ||
		!slices.Equal(links, []membrane.PlanLink{{From: "a", To: "b", Type: "NEXT"}, {From: "b", To: "c", Type: "NEXT"}, {From: "a", To: "c", Type: "DATA"}}) {
		t.Fatalf("subgraph = %+v %+v %v", steps, links, err)
	}
}

func TestMergedFact(t *testing.T) {
	p := membrane.DefaultPolicy()
	mk := func(sens membrane.Sensitivity, conf, sal float64, ev string, tag string) *membrane.Record {
		r, err := p.BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Sensitivity: &sens, Confidence: &conf, Salience: &sal,
			Scope: new("s"), Tags: []string{tag},
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "a", Predicate: "b", Object: "c",
				Evidence: []membrane.EvidenceRef{{SourceType: "doc", SourceID: ev}}}}}, now)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	x, y := mk(membrane.SensitivityLow, 0.9, 0.3, "e1", "t1"), mk(membrane.SensitivityHigh, 0.5, 0.7, "e2", "t2")
	in := membrane.MergedFact([]*membrane.Record{x, y}, now)
	if *in.Sensitivity != membrane.SensitivityHigh || *in.Confidence != 0.9 || *in.Salience != 0.7 || *in.Scope != "s" ||
		len(in.Payload.Semantic.Evidence) != 2 || !slices.Equal(in.Tags, []string{"t1", "t2"}) {
		t.Fatalf("merged input = %+v", in)
	}
	c, err := p.Merge([]*membrane.Record{x, y}, in, membrane.RevisionMeta{Actor: membrane.JobActor}, now)
	if err != nil || len(c.Updates) != 2 || c.Updates[0].Status != membrane.StatusRetracted {
		t.Fatalf("merge of identical facts = %+v, %v", c, err)
	}
}

func TestRecordUsage(t *testing.T) {
	p := membrane.DefaultPolicy()
	meta := membrane.RevisionMeta{Actor: "agent"}
	comp, err := p.BuildRecord(membrane.RecordInput{Type: membrane.TypeCompetence, Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{
		SkillName: "s", Performance: &membrane.PerformanceStats{SuccessCount: 3, FailureCount: 1, SuccessRate: 0.75}}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	c, err := membrane.RecordUsage(comp, membrane.OutcomeFailure, meta, now)
	if err != nil {
		t.Fatal(err)
	}
	perf := c.Result.Payload.(*membrane.CompetencePayload).Performance
	if perf.SuccessCount != 3 || perf.FailureCount != 2 || perf.SuccessRate != 0.6 || !perf.LastUsedAt.Equal(now) ||
		c.Audits[0].Action != membrane.AuditOutcome || c.Result.Version != 2 || c.Audits[0].Previous["performance"] == nil {
		t.Fatalf("competence after a failure: %+v, audit %+v", perf, c.Audits[0])
	}
	if comp.Payload.(*membrane.CompetencePayload).Performance.FailureCount != 1 {
		t.Fatal("RecordUsage changed the record it planned from")
	}

	plan, err := p.BuildRecord(membrane.RecordInput{Type: membrane.TypePlanGraph, Payload: membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "p"}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []membrane.OutcomeStatus{membrane.OutcomeSuccess, membrane.OutcomePartial, membrane.OutcomeSuccess, membrane.OutcomeSuccess} {
		c, err := membrane.RecordUsage(plan, s, meta, now)
		if err != nil {
			t.Fatal(err)
		}
		plan = c.Result
	}
	if m := plan.Payload.(*membrane.PlanGraphPayload).Metrics; m.ExecutionCount != 4 || m.FailureRate != 0.25 {
		t.Fatalf("plan metrics after 4 runs, 1 partial: %+v", m)
	}

	ep := episode(t, "s", membrane.SensitivityLow, nil, []string{"x"})
	if c, err := membrane.RecordUsage(ep, membrane.OutcomeSuccess, meta, now); err != nil || !membrane.Succeeded(c.Result) {
		t.Fatalf("episode outcome: %+v, %v", c, err)
	}
	fact, _ := p.BuildRecord(semanticInput(), now)
	if _, err := membrane.RecordUsage(fact, membrane.OutcomeSuccess, meta, now); membrane.ErrorCode(err) != membrane.EPRECONDITION {
		t.Fatalf("outcome of a fact: %v", err)
	}
	comp.Status = membrane.StatusRetracted
	if _, err := membrane.RecordUsage(comp, membrane.OutcomeSuccess, meta, now); membrane.ErrorCode(err) != membrane.ECONFLICT {
		t.Fatalf("outcome of a retracted competence: %v", err)
	}
	if _, err := membrane.RecordUsage(plan, "won", meta, now); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("unknown status: %v", err)
	}
}
