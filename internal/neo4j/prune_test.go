package neo4j_test

import (
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

func revise(t *testing.T, db *neo4j.DB, lock []string, plan func(map[string]*membrane.Record) (*membrane.Change, error)) *membrane.Record {
	t.Helper()
	r, err := db.Revise(sysCtx(), nil, lock, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return plan(locked)
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.Record
}

func auditOf(t *testing.T, db *neo4j.DB, id string) []*membrane.AuditEntry {
	t.Helper()
	p, err := db.FindAuditEntries(sysCtx(), membrane.AuditFilter{RecordID: &id}, membrane.Page{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

func TestPruneKeepsHistoryAndPolicies(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	fast := func(f func(*membrane.LifecycleInput)) *membrane.LifecycleInput {
		lc := &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}
		if f != nil {
			f(lc)
		}
		return lc
	}
	names := []string{"decayed", "fresh", "manual", "never", "pinned", "floor", "retracted", "old", "contested", "merge-a", "merge-b", "related", "max age", "target"}
	ins := []membrane.RecordInput{
		fact(scope, "decayed", 1, fast(nil)),
		fact(scope, "fresh", 1, nil),
		fact(scope, "manual", 1, fast(func(l *membrane.LifecycleInput) { l.DeletionPolicy = ptr(membrane.DeleteManualOnly) })),
		fact(scope, "never", 1, fast(func(l *membrane.LifecycleInput) { l.DeletionPolicy = ptr(membrane.DeleteNever) })),
		fact(scope, "pinned", 1, fast(func(l *membrane.LifecycleInput) { l.Pinned = ptr(true) })),
		fact(scope, "floor", 1, fast(func(l *membrane.LifecycleInput) { l.MinSalience = ptr(0.2) })),
		fact(scope, "retracted", 1, nil),
		fact(scope, "old", 1, nil),
		fact(scope, "contested", 1, fast(nil)),
		fact(scope, "merge-a", 1, nil),
		fact(scope, "merge-b", 1, nil),
		fact(scope, "related", 1, fast(nil)),
		fact(scope, "max age", 1, &membrane.LifecycleInput{MaxAgeSeconds: ptr(int64(60))}),
		fact(scope, "target", 1, nil),
	}
	recs := neo4jtest.Create(t, db, t0, ins...)
	id := map[string]string{}
	for i, n := range names {
		id[n] = recs[i].ID
	}
	at := t0.Add(time.Minute)
	meta := membrane.RevisionMeta{Actor: "test"}
	p := membrane.DefaultPolicy()
	revise(t, db, []string{id["retracted"]}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Retract(l[id["retracted"]], meta, at)
	})
	// The successor decays fast: it is history (it SUPERSEDES old) all the same.
	successor := revise(t, db, []string{id["old"]}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
		return p.Supersede(l[id["old"]], fact(scope, "successor", 1, fast(nil)), meta, at)
	})
	id["successor"] = successor.ID
	revise(t, db, []string{id["contested"]}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Contest(l[id["contested"]], "https://tickets/1", nil, meta, at)
	})
	merged := revise(t, db, []string{id["merge-a"], id["merge-b"]}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
		return p.Merge([]*membrane.Record{l[id["merge-a"]], l[id["merge-b"]]}, fact(scope, "merged", 1, fast(nil)), meta, at)
	})
	id["merged"] = merged.ID
	revise(t, db, []string{id["related"], id["target"]}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Relate(l[id["related"]], l[id["target"]], membrane.PredSupports, nil, meta, at)
	})

	// The Go rule, evaluated on the records as stored, says what to expect.
	lineage := map[string]bool{"old": true, "successor": true, "merge-a": true, "merge-b": true, "merged": true}
	opts := membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(time.Hour), Scopes: []string{scope}}}
	before := inScope(t, db, scope)
	var want []string
	for n, rid := range id {
		if membrane.Prunable(before[rid], lineage[n], opts) {
			want = append(want, n)
		}
	}
	slices.Sort(want)
	if !slices.Equal(want, []string{"decayed", "max age", "related"}) {
		t.Fatalf("membrane.Prunable picks %v", want)
	}

	res, err := db.Prune(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	after := inScope(t, db, scope)
	var gone []string
	for n, rid := range id {
		if after[rid] == nil {
			gone = append(gone, n)
		}
	}
	slices.Sort(gone)
	if !slices.Equal(gone, want) || res.Changed != int64(len(want)) || res.Scanned != int64(len(before)) {
		t.Fatalf("prune deleted %v (changed %d of %d scanned), want %v of %d", gone, res.Changed, res.Scanned, want, len(before))
	}

	// Each deleted record leaves a tombstone after its trail, found by id.
	trail := auditOf(t, db, id["related"])
	last := trail[len(trail)-1]
	if trail[0].Action != membrane.AuditCreate || last.Action != membrane.AuditDelete || last.Actor != membrane.JobActor ||
		last.Previous["type"] != "semantic" || last.Previous["status"] != "active" ||
		!slices.Equal(last.RemovedEdges(), []string{"SUPPORTS->" + id["target"]}) {
		t.Fatalf("trail of a pruned record = %+v, tombstone %+v", trail, last)
	}
	if _, err := db.FindRecordByID(ctx, id["related"]); membrane.ErrorCode(err) != membrane.ENOTFOUND {
		t.Fatalf("pruned record read: %v, want NOT_FOUND", err)
	}

	// Idempotent: a second pass at the same instant deletes nothing.
	if res, err := db.Prune(ctx, opts); err != nil || res.Changed != 0 {
		t.Fatalf("second prune: %+v, %v", res, err)
	}

	// Once the configured retention has passed, history that reached the
	// floor goes too (the retracted and merged sources, the fast successor
	// and merged record), still never manual_only, never or pinned ones.
	opts.HistoryRetention = 30 * time.Minute
	if _, err := db.Prune(ctx, opts); err != nil {
		t.Fatal(err)
	}
	left := inScope(t, db, scope)
	var kept []string
	for n, rid := range id {
		if left[rid] != nil {
			kept = append(kept, n)
		}
	}
	slices.Sort(kept)
	if !slices.Equal(kept, []string{"floor", "fresh", "manual", "never", "pinned", "target"}) {
		t.Fatalf("after the retention, kept %v", kept)
	}
	// The SUPERSEDES edge between old and its successor, both pruned in
	// this pass, is listed by the tombstone of whichever went first: the
	// pass deletes in the store's order, and the second finds the edge
	// gone.
	tomb := auditOf(t, db, id["old"])
	oldTomb := tomb[len(tomb)-1]
	succ := auditOf(t, db, id["successor"])
	succTomb := succ[len(succ)-1]
	if oldTomb.Action != membrane.AuditDelete || succTomb.Action != membrane.AuditDelete {
		t.Fatalf("tombstones of a superseded record and its successor = %+v, %+v", oldTomb, succTomb)
	}
	fromOld := slices.Equal(oldTomb.RemovedEdges(), []string{"SUPERSEDES<-" + id["successor"]})
	fromSucc := slices.Contains(succTomb.RemovedEdges(), "SUPERSEDES->"+id["old"])
	if fromOld == fromSucc {
		t.Fatalf("the SUPERSEDES edge is listed by %v (old) and %v (successor), want exactly one: %+v, %+v",
			fromOld, fromSucc, oldTomb.RemovedEdges(), succTomb.RemovedEdges())
	}
}

func TestDeleteRecord(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	recs := neo4jtest.Create(t, db, t0,
		fact(scope, "manual", 1, &membrane.LifecycleInput{DeletionPolicy: ptr(membrane.DeleteManualOnly)}),
		fact(scope, "never", 1, &membrane.LifecycleInput{DeletionPolicy: ptr(membrane.DeleteNever)}),
	)
	manual, never := recs[0].ID, recs[1].ID
	revise(t, db, []string{manual, never}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Relate(l[never], l[manual], membrane.PredMentions, nil, membrane.RevisionMeta{Actor: "test"}, t0)
	})
	meta := membrane.RevisionMeta{Actor: "admin-1", Rationale: "asked to forget"}
	plan := func(r *membrane.Record, edges []membrane.AuditRef) (*membrane.AuditEntry, error) {
		return membrane.PlanDelete(r, edges, meta, t0.Add(time.Hour))
	}
	if _, err := db.DeleteRecord(ctx, never, plan); membrane.ErrorCode(err) != membrane.EPRECONDITION {
		t.Fatalf("deleting a never record: %v, want FAILED_PRECONDITION", err)
	}
	if _, err := db.DeleteRecord(ctx, "no-such-record", plan); membrane.ErrorCode(err) != membrane.ENOTFOUND {
		t.Fatalf("deleting a missing record: %v, want NOT_FOUND", err)
	}
	a, err := db.DeleteRecord(ctx, manual, plan)
	if err != nil {
		t.Fatal(err)
	}
	if a.Action != membrane.AuditDelete || a.Actor != "admin-1" || a.RecordID != manual {
		t.Fatalf("tombstone = %+v", a)
	}
	trail := auditOf(t, db, manual)
	if len(trail) != 3 || trail[2].ID != a.ID || !slices.Equal(trail[2].RemovedEdges(), []string{"MENTIONS<-" + never}) ||
		trail[2].Previous["version"] != float64(1) {
		t.Fatalf("trail after delete = %+v, tombstone %+v", trail, trail[len(trail)-1])
	}
	if _, err := db.FindRecordByID(ctx, never); err != nil {
		t.Fatalf("the other end of the removed edge: %v", err)
	}
	if _, err := db.DeleteRecord(ctx, manual, plan); membrane.ErrorCode(err) != membrane.ENOTFOUND {
		t.Fatalf("deleting twice: %v, want NOT_FOUND", err)
	}
}

// TestPruneCapsReferences: a pruned hub's tombstone stores at most the
// bound of references (membrane.MaxAuditRefs; 2 here) and counts the rest.
func TestPruneCapsReferences(t *testing.T) {
	db := neo4jtest.DB(t)
	neo4j.SetMaxAuditRefs(db, 2)
	scope := neo4jtest.Scope(t)
	recs := neo4jtest.Create(t, db, t0, fact(scope, "hub", 1, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}),
		fact(scope, "a", 1, nil), fact(scope, "b", 1, nil), fact(scope, "c", 1, nil))
	hub := recs[0].ID
	for _, r := range recs[1:] {
		revise(t, db, []string{r.ID, hub}, func(l map[string]*membrane.Record) (*membrane.Change, error) {
			return membrane.Relate(l[r.ID], l[hub], membrane.PredMentions, nil, membrane.RevisionMeta{Actor: "test"}, t0)
		})
	}
	if _, err := db.Prune(sysCtx(), membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(time.Hour), Scopes: []string{scope}}}); err != nil {
		t.Fatal(err)
	}
	trail := auditOf(t, db, hub)
	tomb := trail[len(trail)-1]
	if tomb.Action != membrane.AuditDelete || len(tomb.Related) != 2 || tomb.RelatedOmitted != 1 {
		t.Fatalf("tombstone %+v: %d references, %d omitted; want 2 and 1", tomb, len(tomb.Related), tomb.RelatedOmitted)
	}
}
