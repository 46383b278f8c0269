package jobs_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// episodeIn returns an episode created at `at` in scope, with an event per
// summary and a tool call per tool (the third depends on the first).
func episodeIn(t *testing.T, scope string, at time.Time, outcome membrane.OutcomeStatus, sens membrane.Sensitivity, summaries []string, tools ...string) *membrane.Ingested {
	t.Helper()
	ep := &membrane.EpisodicPayload{Outcome: &outcome}
	for _, s := range summaries {
		ep.Timeline = append(ep.Timeline, membrane.TimelineEvent{T: at, EventKind: "deploy", Ref: "r", Summary: s})
	}
	ids := []string{"a", "b", "c", "d"}
	for i, tool := range tools {
		n := membrane.ToolNode{ID: ids[i], Tool: tool, Args: map[string]any{"n": i}}
		if i == 2 {
			n.DependsOn = []string{"a"}
		}
		ep.ToolGraph = append(ep.ToolGraph, n)
	}
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope, Sensitivity: &sens,
		Payload: membrane.PayloadInput{Episodic: ep}}, at)
	if err != nil {
		t.Fatal(err)
	}
	return &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", at)}
}

func factIn(t *testing.T, scope, subject, predicate, object string, at time.Time) *membrane.Ingested {
	t.Helper()
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope, Salience: new(0.5),
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: subject, Predicate: predicate, Object: object,
			Evidence: []membrane.EvidenceRef{{SourceType: "doc", SourceID: subject}}}}}, at)
	if err != nil {
		t.Fatal(err)
	}
	return &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", at)}
}

func store(t *testing.T, db *neo4j.DB, recs ...*membrane.Ingested) {
	t.Helper()
	if _, err := db.CreateRecords(sysCtx(), nil, recs); err != nil {
		t.Fatal(err)
	}
}

// snapshot is everything in a scope: records with their versions and
// salience, and the number of audit entries.
func snapshot(t *testing.T, db *neo4j.DB, scopes ...string) (map[string]*membrane.Record, int) {
	t.Helper()
	ctx := sysCtx()
	out := map[string]*membrane.Record{}
	var after *membrane.Cursor
	for {
		p, err := db.FindRecords(ctx, membrane.RecordFilter{Scopes: scopes}, membrane.DefaultRecordOrder, membrane.Page{First: 500, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			out[r.ID] = r
		}
		if !p.PageInfo.HasNextPage {
			break
		}
		after, _ = membrane.DecodeCursor(*p.PageInfo.EndCursor)
	}
	ids := make([]string, 0, len(out))
	for id := range out {
		ids = append(ids, id)
	}
	audits, err := db.AuditPagesForRecords(ctx, ids, "", membrane.Page{First: 500})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range audits {
		n += len(p.Items)
	}
	return out, n
}

func byType(recs map[string]*membrane.Record, typ membrane.MemoryType, status membrane.RevisionStatus) []*membrane.Record {
	var out []*membrane.Record
	for _, r := range recs {
		if r.Type == typ && r.Status == status {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *membrane.Record) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

func derivedFrom(t *testing.T, db *neo4j.DB, id string) []string {
	t.Helper()
	got, err := db.Neighbors(sysCtx(), []string{id}, membrane.NeighborQuery{
		Predicates: []membrane.Predicate{membrane.PredDerivedFrom}, Direction: membrane.DirOut, Page: membrane.Page{First: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range got[id].Items {
		out = append(out, n.Record.ID)
	}
	slices.Sort(out)
	return out
}

func consolidate(t *testing.T, r *jobs.Runner) map[string]any {
	t.Helper()
	run, err := r.RunJob(sysCtx(), membrane.JobConsolidate)
	if err != nil {
		t.Fatal(err)
	}
	if run.Error != "" {
		t.Fatalf("consolidation failed: %s", run.Error)
	}
	return run.Details
}

// zero reports whether a run's details count nothing done.
func zero(details map[string]any) bool {
	for k, v := range details {
		if k != "stageSeconds" && v != int64(0) {
			return false
		}
	}
	return true
}

func TestConsolidation(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	// Tool names unique to this test keep its skill names its own.
	tool := func(n string) string { return scope + ":" + n }
	checkout, build, test, solo := tool("checkout"), tool("build"), tool("test"), tool("solo")
	e1 := episodeIn(t, scope, t0, membrane.OutcomeSuccess, membrane.SensitivityLow, []string{"v2 shipped"}, checkout, build, test)
	e2 := episodeIn(t, scope, t0, membrane.OutcomeSuccess, membrane.SensitivityHigh, []string{"v2 shipped", "rollback tested"}, test, checkout, build)
	e3 := episodeIn(t, scope, t0, membrane.OutcomeFailure, membrane.SensitivityLow, []string{"v3 failed"}, checkout, build, test)
	e4 := episodeIn(t, scope, t0, membrane.OutcomeSuccess, membrane.SensitivityLow, nil, solo)
	known := factIn(t, scope, "deploy", "observed_in", "rollback tested", t0)
	d1, d2 := factIn(t, scope, "db", "is", "postgres", t0), factIn(t, scope, "db", "is", "postgres", t0.Add(time.Second))
	other := factIn(t, scope, "db", "is", "mysql", t0) // same subject and predicate, another object: not a duplicate
	store(t, db, e1, e2, e3, e4, known, d1, d2, other)

	c := gqltest.NewClock(t0.Add(25 * time.Hour))
	r := runner(t, db, c, "me", []string{scope})
	got := consolidate(t, r)
	want := map[string]any{"episodesCompressed": int64(4), "factsCreated": int64(1), "factsReinforced": int64(1),
		"competencesCreated": int64(1), "competencesUpdated": int64(0), "plansCreated": int64(3), "duplicatesMerged": int64(1)}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("first run: %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	recs, audits := snapshot(t, db, scope)

	// Episodic compression: once for the one window of age, audited.
	for _, e := range []*membrane.Ingested{e1, e2, e3, e4} {
		ep := recs[e.Record.ID]
		if ep.Lifecycle.BaseSalience != 0.5 || ep.Lifecycle.Compressions != 1 {
			t.Fatalf("episode after one window: base %v, compressions %d", ep.Lifecycle.BaseSalience, ep.Lifecycle.Compressions)
		}
		// The compression's audit entry is gated like every other: readers
		// who see the episode see it.
		decay := membrane.AuditDecay
		trail, err := db.FindAuditEntries(sysCtx(), membrane.AuditFilter{RecordID: &ep.ID, Action: &decay}, membrane.Page{First: 10})
		if err != nil || len(trail.Items) != 1 {
			t.Fatalf("compression audit of %s: %v entries, err %v", ep.ID, len(trail.Items), err)
		}
	}
	// Facts: "v2 shipped" created once from both episodes; the known fact
	// reinforced and linked; mysql untouched.
	var shipped *membrane.Record
	for _, f := range byType(recs, membrane.TypeSemantic, membrane.StatusActive) {
		if f.Payload.(*membrane.SemanticPayload).Object == "v2 shipped" {
			shipped = f
		}
	}
	if shipped == nil || shipped.Scope != scope || shipped.Sensitivity != membrane.SensitivityLow ||
		!slices.Equal(derivedFrom(t, db, shipped.ID), sorted(e1.Record.ID, e2.Record.ID)) {
		t.Fatalf("extracted fact = %+v", shipped)
	}
	if k := recs[known.Record.ID]; k.Version != 2 || k.Lifecycle.BaseSalience <= 0.5 ||
		!slices.Equal(derivedFrom(t, db, k.ID), []string{e2.Record.ID}) {
		t.Fatalf("known fact after consolidation = %+v", k)
	}
	if o := recs[other.Record.ID]; o.Version != 1 || o.Status != membrane.StatusActive {
		t.Fatalf("a fact with another object was touched: %+v", o)
	}
	// Competence from the two successful episodes with one signature.
	comps := byType(recs, membrane.TypeCompetence, membrane.StatusActive)
	if len(comps) != 1 {
		t.Fatalf("%d competences, want 1", len(comps))
	}
	cp := comps[0].Payload.(*membrane.CompetencePayload)
	if cp.SkillName != membrane.SkillName(build+"+"+checkout+"+"+test) || cp.Performance.SuccessCount != 2 ||
		comps[0].Sensitivity != membrane.SensitivityHigh || comps[0].Scope != scope ||
		!slices.Equal(derivedFrom(t, db, comps[0].ID), sorted(e1.Record.ID, e2.Record.ID)) {
		t.Fatalf("competence = %+v %+v", comps[0], cp)
	}
	// Plans: one per episode with three tool calls, stored as subgraphs,
	// except the sealed one (of the high episode): its steps would be its
	// ops and parameters in clear.
	plans := byType(recs, membrane.TypePlanGraph, membrane.StatusActive)
	if len(plans) != 3 {
		t.Fatalf("%d plans, want 3", len(plans))
	}
	for _, p := range plans {
		from := derivedFrom(t, db, p.ID)
		steps, links, err := db.PlanSubgraph(sysCtx(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Sensitivity == membrane.SensitivityHigh {
			if len(from) != 1 || from[0] != e2.Record.ID || len(steps) != 0 || len(links) != 0 {
				t.Fatalf("sealed plan %s: from %v, steps %+v, links %+v", p.ID, from, steps, links)
			}
			continue
		}
		if len(from) != 1 || len(steps) != 3 || !slices.Equal(links, []membrane.PlanLink{
			{From: "a", To: "c", Type: "DATA"}, {From: "a", To: "b", Type: "NEXT"}, {From: "b", To: "c", Type: "NEXT"}}) {
			t.Fatalf("plan %s: from %v, steps %+v, links %+v", p.ID, from, steps, links)
		}
		if from[0] == e3.Record.ID && p.Payload.(*membrane.PlanGraphPayload).Metrics.FailureRate != 1 {
			t.Fatalf("plan of the failed episode: %+v", p.Payload.(*membrane.PlanGraphPayload).Metrics)
		}
	}
	// Duplicates merged through the merge revision: audited, linked.
	if recs[d1.Record.ID].Status != membrane.StatusRetracted || recs[d2.Record.ID].Status != membrane.StatusRetracted {
		t.Fatalf("duplicates not retracted: %v %v", recs[d1.Record.ID].Status, recs[d2.Record.ID].Status)
	}
	var merged *membrane.Record
	for _, f := range byType(recs, membrane.TypeSemantic, membrane.StatusActive) {
		if f.Payload.(*membrane.SemanticPayload).Object == "postgres" {
			merged = f
		}
	}
	if merged == nil || !slices.Equal(derivedFrom(t, db, merged.ID), sorted(d1.Record.ID, d2.Record.ID)) {
		t.Fatalf("merged fact = %+v", merged)
	}
	trail, err := db.FindAuditEntries(sysCtx(), membrane.AuditFilter{RecordID: &d1.Record.ID}, membrane.Page{First: 10})
	if err != nil || trail.Items[len(trail.Items)-1].Action != membrane.AuditMerge || trail.Items[len(trail.Items)-1].Actor != membrane.JobActor {
		t.Fatalf("duplicate's trail = %+v, %v", trail, err)
	}

	// Twice = once: nothing is created or changed by a second run, at the
	// same instant or later within the window.
	for _, at := range []time.Time{c.Now(), c.Now().Add(time.Hour)} {
		c.Set(at)
		if got := consolidate(t, r); !zero(got) {
			t.Fatalf("run at %v over unchanged data did %v", at, got)
		}
		again, againAudits := snapshot(t, db, scope)
		if len(again) != len(recs) || againAudits != audits {
			t.Fatalf("run at %v: %d records and %d audit entries, had %d and %d", at, len(again), againAudits, len(recs), audits)
		}
		for id, r := range again {
			if r.Version != recs[id].Version || r.Lifecycle.BaseSalience != recs[id].Lifecycle.BaseSalience {
				t.Fatalf("run at %v changed %s", at, id)
			}
		}
	}

	// New evidence: another success with the same tools updates the
	// competence and reinforces the fact it supports; it gets its plan.
	e5 := episodeIn(t, scope, c.Now(), membrane.OutcomeSuccess, membrane.SensitivityLow, []string{"v2 shipped"}, checkout, build, test)
	store(t, db, e5)
	c.Set(c.Now().Add(time.Hour))
	got = consolidate(t, r)
	want = map[string]any{"episodesCompressed": int64(0), "factsCreated": int64(0), "factsReinforced": int64(1),
		"competencesCreated": int64(0), "competencesUpdated": int64(1), "plansCreated": int64(1), "duplicatesMerged": int64(0)}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("run with a new episode: %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	comp, err := db.FindRecordByID(sysCtx(), comps[0].ID)
	if err != nil || comp.Payload.(*membrane.CompetencePayload).Performance.SuccessCount != 3 {
		t.Fatalf("competence after a third success: %+v, %v", comp, err)
	}
	// The next window of age compresses once more.
	c.Set(t0.Add(49 * time.Hour))
	if got := consolidate(t, r); got["episodesCompressed"] != int64(4) {
		t.Fatalf("second window: %v", got)
	}
	ep, err := db.FindRecordByID(sysCtx(), e1.Record.ID)
	if err != nil || math.Abs(ep.Lifecycle.BaseSalience-0.25) > 1e-12 || ep.Lifecycle.Compressions != 2 {
		t.Fatalf("episode after two windows: %+v, %v", ep.Lifecycle, err)
	}
}

// Competences from episodes of several scopes get the restricted mixed
// scope and the highest sensitivity of their sources (reference §1.9).
func TestCompetenceAcrossScopes(t *testing.T) {
	db := neo4jtest.DB(t)
	a, b := neo4jtest.Scope(t), neo4jtest.Scope(t)
	tool := a + ":only-tool"
	store(t, db,
		episodeIn(t, a, t0, membrane.OutcomeSuccess, membrane.SensitivityMedium, nil, tool),
		episodeIn(t, b, t0, membrane.OutcomeSuccess, membrane.SensitivityHigh, nil, tool))
	c := gqltest.NewClock(t0.Add(time.Hour))
	r := runner(t, db, c, "me", []string{a, b})
	if got := consolidate(t, r); got["competencesCreated"] != int64(1) {
		t.Fatalf("details = %v", got)
	}
	recs, _ := snapshot(t, db, membrane.MixedScope)
	var found *membrane.Record
	for _, rec := range recs {
		if cp, ok := rec.Payload.(*membrane.CompetencePayload); ok && cp.SkillName == membrane.SkillName(tool) {
			found = rec
		}
	}
	if found == nil || found.Sensitivity != membrane.SensitivityHigh {
		t.Fatalf("mixed-scope competence = %+v", found)
	}
	// The mixed scope is outside the test's own scopes: leave nothing there.
	t.Cleanup(func() {
		if _, err := db.DeleteRecord(sysCtx(), found.ID, func(r *membrane.Record, edges []membrane.AuditRef) (*membrane.AuditEntry, error) {
			return membrane.PlanDelete(r, edges, membrane.RevisionMeta{Actor: "test cleanup"}, c.Now())
		}); err != nil {
			t.Error(err)
		}
	})
	if got := consolidate(t, r); !zero(got) {
		t.Fatalf("second run = %v", got)
	}
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

// TestCompetenceRaisedHidesItsAudit: consolidation raises a LOW competence
// to HIGH when a HIGH episode joins its pattern. A LOW reader, for whom the
// competence is now invisible, then gets nothing of it: none of its audit
// entries through auditLog (by the jobs' actor or by its id) or
// Record.auditLog, and the metrics count none of them. A MEDIUM reader,
// who sees it redacted, gets no audit log either.
func TestCompetenceRaisedHidesItsAudit(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	tool := scope + ":raise-tool"
	store(t, db,
		episodeIn(t, scope, t0, membrane.OutcomeSuccess, membrane.SensitivityLow, nil, tool),
		episodeIn(t, scope, t0, membrane.OutcomeSuccess, membrane.SensitivityLow, nil, tool))
	c := gqltest.NewClock(t0.Add(time.Hour))
	r := runner(t, db, c, "me", []string{scope})
	if got := consolidate(t, r); got["competencesCreated"] != int64(1) {
		t.Fatalf("first run: %v", got)
	}
	recs, _ := snapshot(t, db, scope)
	comps := byType(recs, membrane.TypeCompetence, membrane.StatusActive)
	if len(comps) != 1 || comps[0].Sensitivity != membrane.SensitivityLow {
		t.Fatalf("competences after the first run: %+v", comps)
	}
	id := comps[0].ID
	store(t, db, episodeIn(t, scope, c.Now(), membrane.OutcomeSuccess, membrane.SensitivityHigh, nil, tool))
	c.Set(c.Now().Add(time.Hour))
	if got := consolidate(t, r); got["competencesUpdated"] != int64(1) {
		t.Fatalf("second run: %v", got)
	}
	if comp, err := db.FindRecordByID(sysCtx(), id); err != nil || comp.Sensitivity != membrane.SensitivityHigh {
		t.Fatalf("competence after a high episode joined: %+v, %v", comp, err)
	}
	actor := membrane.JobActor
	for _, sens := range []membrane.Sensitivity{membrane.SensitivityLow, membrane.SensitivityMedium} {
		trust := membrane.Trust{Principal: membrane.Principal{Actor: "reader", Role: membrane.RoleReader, MaxSensitivity: sens, Scopes: []string{scope}},
			Ceiling: sens.Level(), Scopes: []string{scope}}
		ctx := membrane.NewContextWithTrust(t.Context(), trust)
		seen := 0
		for _, f := range []membrane.AuditFilter{{Actor: &actor}, {RecordID: &id}} {
			p, err := db.FindAuditEntries(ctx, f, membrane.Page{First: 500})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range p.Items {
				if a.RecordID == id {
					seen++
				}
			}
		}
		pages, err := db.AuditPagesForRecords(ctx, []string{id}, "", membrane.Page{First: 100})
		if err != nil {
			t.Fatal(err)
		}
		if p := pages[id]; p != nil {
			seen += len(p.Items)
		}
		// The metrics count exactly the entries of the records the reader
		// sees in full.
		m, err := db.Metrics(ctx, trust, []string{scope}, c.Now())
		if err != nil {
			t.Fatal(err)
		}
		all, err := db.Metrics(sysCtx(), membrane.SystemTrust("test"), []string{scope}, c.Now())
		if err != nil {
			t.Fatal(err)
		}
		visibleEntries := int64(0)
		recs, _ := snapshot(t, db, scope)
		for rid, rec := range recs {
			if rec.Sensitivity.Level() <= sens.Level() {
				p, err := db.AuditPagesForRecords(sysCtx(), []string{rid}, "", membrane.Page{First: 500})
				if err != nil {
					t.Fatal(err)
				}
				visibleEntries += int64(len(p[rid].Items))
			}
		}
		if seen != 0 || m.AuditEntries != visibleEntries {
			t.Errorf("%s reader: %d entries of the raised competence, metrics count %d entries, want %d (those of the records it sees; all: %d)",
				sens, seen, m.AuditEntries, visibleEntries, all.AuditEntries)
		}
	}
}

// TestConsolidationSkipsUnopened: records sealed under a key the server
// lacks do not fail consolidation (docs/operations.md, "Unknown keys").
// An earlier version failed every run: the facts stage decoded such an
// episode, and the duplicate stage's merge of two equal facts sealed under
// the lost key was refused with FAILED_PRECONDITION. A page holding only
// skipped episodes (a batch of one) does not end the stage either: the
// readable episode after it still gives its fact.
func TestConsolidationSkipsUnopened(t *testing.T) {
	suffix := membrane.NewID()
	lostKey, keptKey := neo4jtest.SealKey("jlost-"+suffix, 61), neo4jtest.SealKey("jkept-"+suffix, 62)
	lost := neo4jtest.OpenSealing(t, []membrane.SealKey{lostKey}, lostKey.ID)
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{keptKey}, keptKey.ID)
	scope := neo4jtest.Scope(t)
	neo4jtest.DeleteAtEnd(t, server, scope)
	high := membrane.SensitivityHigh
	sealedFact := func() *membrane.Ingested {
		r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope, Sensitivity: &high,
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "vault", Predicate: "opens_at", Object: "midnight",
				Evidence: []membrane.EvidenceRef{{SourceType: "doc", SourceID: "vault"}}}}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		return &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", t0)}
	}
	// Ids grow with creation: the lost episode comes first in id order.
	lostEp := episodeIn(t, scope, t0, membrane.OutcomeSuccess, high, []string{"lost vault opened"})
	d1, d2 := sealedFact(), sealedFact()
	store(t, lost, lostEp, d1, d2)
	readable := episodeIn(t, scope, t0, membrane.OutcomeSuccess, high, []string{"v9 shipped"})
	store(t, server, readable)

	c := gqltest.NewClock(t0.Add(time.Hour))
	r := runner(t, server, c, "me", []string{scope}, func(cfg *jobs.Config) { cfg.Consolidation.Batch = 1 })
	for run := 1; run <= 2; run++ {
		got := consolidate(t, r) // fails the test when the run fails
		want := map[string]any{"factsCreated": int64(0), "duplicatesMerged": int64(0)}
		if run == 1 {
			want["factsCreated"] = int64(1) // the readable episode's, once
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("run %d: %s = %v, want %v (all: %v)", run, k, got[k], v, got)
			}
		}
	}
	recs, _ := snapshot(t, server, scope)
	for _, d := range []*membrane.Ingested{d1, d2} {
		if f := recs[d.Record.ID]; f == nil || f.Status != membrane.StatusActive || f.Version != 1 {
			t.Fatalf("duplicate sealed under the lost key: %+v, want it untouched", f)
		}
	}
}
