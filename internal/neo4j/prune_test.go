package neo4j_test

import (
	"cmp"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
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

// TestDeletedIDsAreNeverReused: once deleteRecord or prune deleted a
// record, every path that creates a record with a chosen id refuses its id
// with the CONFLICT of an existing record, writes nothing, and the deleted
// record's audit trail stays its own (it gains no entry).
func TestDeletedIDsAreNeverReused(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	p := membrane.DefaultPolicy()
	meta := membrane.RevisionMeta{Actor: "test"}
	at := t0.Add(time.Hour)

	deleteByAdmin := func(t *testing.T, id string) {
		t.Helper()
		if _, err := db.DeleteRecord(ctx, id, func(r *membrane.Record, edges []membrane.AuditRef) (*membrane.AuditEntry, error) {
			return membrane.PlanDelete(r, edges, meta, at)
		}); err != nil {
			t.Fatal(err)
		}
	}
	prune := func(t *testing.T, scope string, id string) {
		t.Helper()
		res, err := db.Prune(ctx, membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(24 * time.Hour), Scopes: []string{scope}}})
		if err != nil || res.Changed != 1 {
			t.Fatalf("prune: %+v, %v; want 1 record deleted", res, err)
		}
		if _, err := db.FindRecordByID(ctx, id); membrane.ErrorCode(err) != membrane.ENOTFOUND {
			t.Fatalf("pruned record read: %v", err)
		}
	}
	withID := func(in membrane.RecordInput, id string) membrane.RecordInput {
		in.ID = ptr(id)
		return in
	}
	// Each path creates a record with id (a deleted record's) in scope,
	// from the sources it created first.
	paths := []struct {
		name   string
		create func(t *testing.T, scope, id string) ([]*membrane.Record, error)
	}{
		{"createRecord and ingestBatch", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			r, err := p.BuildRecord(withID(fact(scope, "again", 0.5, nil), id), at)
			if err != nil {
				t.Fatal(err)
			}
			_, err = db.CreateRecords(ctx, nil, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", at)}})
			return nil, err
		}},
		{"supersede", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			old := neo4jtest.Create(t, db, t0, fact(scope, "old", 0.5, nil))[0]
			_, err := db.Revise(ctx, nil, []string{old.ID}, nil, func(l, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Supersede(l[old.ID], withID(fact(scope, "new", 0.5, nil), id), meta, at)
			})
			return []*membrane.Record{old}, err
		}},
		{"fork", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			src := neo4jtest.Create(t, db, t0, fact(scope, "source", 0.5, nil))[0]
			_, err := db.Revise(ctx, nil, []string{src.ID}, nil, func(l, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Fork(l[src.ID], withID(fact(scope, "fork", 0.5, nil), id), meta, at)
			})
			return []*membrane.Record{src}, err
		}},
		{"merge", func(t *testing.T, scope, id string) ([]*membrane.Record, error) {
			rs := neo4jtest.Create(t, db, t0, fact(scope, "a", 0.5, nil), fact(scope, "b", 0.5, nil))
			_, err := db.Revise(ctx, nil, []string{rs[0].ID, rs[1].ID}, nil, func(l, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return p.Merge([]*membrane.Record{l[rs[0].ID], l[rs[1].ID]}, withID(fact(scope, "merged", 0.5, nil), id), meta, at)
			})
			return rs, err
		}},
	}
	deletions := []struct {
		name string
		// lc makes the record prunable (a second's half-life) when pruned.
		lc     *membrane.LifecycleInput
		delete func(t *testing.T, scope, id string)
	}{
		{"deleteRecord", nil, func(t *testing.T, _, id string) { deleteByAdmin(t, id) }},
		{"prune", &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}, prune},
	}
	for _, d := range deletions {
		for _, path := range paths {
			t.Run(d.name+" then "+path.name, func(t *testing.T) {
				scope := neo4jtest.Scope(t)
				gone := neo4jtest.Create(t, db, t0, fact(scope, "deleted", 0.5, d.lc))[0]
				d.delete(t, scope, gone.ID)
				trail := auditOf(t, db, gone.ID)

				sources, err := path.create(t, scope, gone.ID)
				if membrane.ErrorCode(err) != membrane.ECONFLICT || membrane.ErrorMessage(err) != membrane.IDTaken {
					t.Fatalf("creating the deleted id: %v, want the CONFLICT of an existing record", err)
				}
				if _, err := db.FindRecordByID(ctx, gone.ID); membrane.ErrorCode(err) != membrane.ENOTFOUND {
					t.Fatalf("the deleted id reads as %v", err)
				}
				// Nothing was written: the sources are as they were created.
				after := inScope(t, db, scope)
				if len(after) != len(sources) {
					t.Fatalf("%d records after the refused create, want the %d sources", len(after), len(sources))
				}
				for _, src := range sources {
					if r := after[src.ID]; r == nil || r.Status != membrane.StatusActive || r.Version != src.Version {
						t.Fatalf("source after the refused create = %+v, want it unchanged", r)
					}
				}
				if after := auditOf(t, db, gone.ID); len(after) != len(trail) {
					t.Fatalf("the deleted record's trail went from %d to %d entries", len(trail), len(after))
				}
			})
		}
	}
}

// raw runs a statement on the test database directly, for tests that set
// up states no store method writes or read what is stored, and returns its
// records.
func raw(t *testing.T, stmt string, params map[string]any) []*driver.Record {
	t.Helper()
	auth := driver.NoAuth()
	if u := os.Getenv("NEO4J_USER"); u != "" {
		auth = driver.BasicAuth(u, os.Getenv("NEO4J_PASSWORD"), "")
	}
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), auth)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	res, err := driver.ExecuteQuery(context.Background(), d, stmt, params, driver.EagerResultTransformer,
		driver.ExecuteQueryWithDatabase(cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j")))
	if err != nil {
		t.Fatal(err)
	}
	return res.Records
}

// chainOrder walks the NEXT chain from first and returns the indexes of
// recs in chain order.
func chainOrder(t *testing.T, db *neo4j.DB, recs []*membrane.Record, first int) []int {
	t.Helper()
	index := map[string]int{}
	ids := make([]string, len(recs))
	for i, r := range recs {
		index[r.ID], ids[i] = i, r.ID
	}
	next, err := db.Neighbors(sysCtx(), ids, membrane.NeighborQuery{Predicates: []membrane.Predicate{membrane.PredNext},
		Direction: membrane.DirOut, Page: membrane.Page{First: 10}})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for id := recs[first].ID; id != ""; {
		out = append(out, index[id])
		if len(out) > len(recs) {
			t.Fatalf("NEXT cycle: %v", out)
		}
		var ns []*membrane.Neighbor
		if page := next[id]; page != nil {
			ns = page.Items
		}
		if len(ns) > 1 {
			t.Fatalf("record %d has %d next episodes", index[id], len(ns))
		}
		id = ""
		if len(ns) == 1 {
			id = ns[0].Record.ID
		}
	}
	return out
}

// TestSessionChainPruneRelinks: pruning episodes of a session (one, two
// next to each other, the first) joins the episodes around them, in the
// prune's transaction, and leaves the chain a line.
func TestSessionChainPruneRelinks(t *testing.T) {
	db := neo4jtest.DB(t)
	tests := []struct {
		name   string
		pruned []int
		want   []int
	}{
		{"the middle one", []int{2}, []int{0, 1, 3, 4}},
		{"two next to each other", []int{1, 2}, []int{0, 3, 4}},
		{"the first and the last", []int{0, 4}, []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			ins := make([]membrane.RecordInput, 5)
			for i := range ins {
				ins[i] = episode(scope, "s", i)
				ins[i].Lifecycle = &membrane.LifecycleInput{DeletionPolicy: ptr(membrane.DeleteNever)}
				if slices.Contains(tt.pruned, i) {
					// Prunable: a second's half-life.
					ins[i].Lifecycle = &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1)), DeletionPolicy: ptr(membrane.DeleteAutoPrune)}
				}
			}
			recs := neo4jtest.Create(t, db, t0, ins...)
			if got := chainOrder(t, db, recs, 0); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
				t.Fatalf("chain before pruning %v", got)
			}
			res, err := db.Prune(sysCtx(), membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(24 * time.Hour), Scopes: []string{scope}}})
			if err != nil || res.Changed != int64(len(tt.pruned)) {
				t.Fatalf("prune: %+v, %v; want %d deleted", res, err, len(tt.pruned))
			}
			var kept []*membrane.Record
			for i, r := range recs {
				if !slices.Contains(tt.pruned, i) {
					kept = append(kept, r)
				}
			}
			got := chainOrder(t, db, kept, 0)
			want := make([]int, len(tt.want))
			for i, w := range tt.want {
				want[i] = slices.Index(kept, recs[w])
			}
			if !slices.Equal(got, want) {
				t.Errorf("chain after pruning %v (indexes among the kept), want %v", got, want)
			}
			if v, err := db.CheckInvariants(sysCtx(), scope); err != nil || len(v) > 0 {
				t.Errorf("invariants: %v, %v", v, err)
			}
		})
	}
}
