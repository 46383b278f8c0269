package neo4j_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRevisionGuard writes, through the store's seam between a revision's
// read and its guarded write, what a concurrent request could write there,
// and checks that the guard catches it: nothing of the stale plan is
// written, and the revision reads and plans again on the new state (or
// answers as that state requires), its last run under locks. The revision under test contests
// record a with the reference "ours", reading record b (the contester's
// stand-in: a record it reads without changing).
func TestRevisionGuard(t *testing.T) {
	shared := neo4jtest.DB(t)
	db := neo4jtest.Open(t)
	ctx := sysCtx()
	meta := membrane.RevisionMeta{Actor: "test"}
	contest := func(t *testing.T, id, ref string) *membrane.Revised {
		t.Helper()
		r, err := shared.Revise(ctx, nil, []string{id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			return membrane.Contest(locked[id], ref, nil, meta, t0)
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	key := func(t *testing.T, args string) *membrane.Idempotency {
		t.Helper()
		k := "guard-" + membrane.NewID()
		idem, err := membrane.NewIdempotency(&k, "contest", args)
		if err != nil {
			t.Fatal(err)
		}
		return idem
	}
	hour := ptr(int64(3600))
	// seen is what one run of the plan read: a's version, salience and
	// evidence, and b's version (0: b missing).
	type seen struct {
		version     int64
		salience    float64
		evidence    []string
		readVersion int64
	}
	for _, tc := range []struct {
		name string
		// idem makes the revision keyed; its key is passed to between.
		idem *membrane.Idempotency
		// between runs in the seam of the runs listed in runs (nil: the
		// first only), on the shared store, with the revision's records.
		between func(t *testing.T, a, b *membrane.Record, idem *membrane.Idempotency)
		every   bool
		// move makes the revision also move a to another scope: its write
		// is then more than one statement (the audit entries re-stamped
		// after apply_change), in one managed transaction.
		move bool
		// check gets what each run of the plan read, the revision's answer
		// and a as stored after it.
		check func(t *testing.T, runs []seen, got *membrane.Revised, err error, a, b *membrane.Record)
	}{
		{
			name: "nothing in between: one run",
			check: func(t *testing.T, runs []seen, got *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 1 || a.Version != 2 || !slices.Equal(a.ContestEvidence, []string{"ours"}) {
					t.Fatalf("err %v, %d runs, a at version %d with evidence %v: want one run, version 2, [ours]", err, len(runs), a.Version, a.ContestEvidence)
				}
			},
		},
		{
			name:    "a revision of the record in between: planned again on its result",
			between: func(t *testing.T, a, _ *membrane.Record, _ *membrane.Idempotency) { contest(t, a.ID, "theirs") },
			check: func(t *testing.T, runs []seen, got *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 2 {
					t.Fatalf("err %v after %d runs, want success after 2", err, len(runs))
				}
				if runs[1].version != 2 || !slices.Equal(runs[1].evidence, []string{"theirs"}) {
					t.Fatalf("the second run read version %d, evidence %v: want the concurrent contest's result", runs[1].version, runs[1].evidence)
				}
				// The first plan (version 2, evidence [ours]) was not written.
				if a.Version != 3 || !slices.Equal(a.ContestEvidence, []string{"theirs", "ours"}) || got.Record.Version != 3 {
					t.Fatalf("a at version %d with evidence %v (answer at %d): want 3, [theirs ours]", a.Version, a.ContestEvidence, got.Record.Version)
				}
			},
		},
		{
			name:    "a revision in between a write of two statements: rolled back and planned again",
			move:    true,
			between: func(t *testing.T, a, _ *membrane.Record, _ *membrane.Idempotency) { contest(t, a.ID, "theirs") },
			check: func(t *testing.T, runs []seen, got *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 2 || runs[1].version != 2 {
					t.Fatalf("err %v after %d runs (%+v), want success after 2, the second at version 2", err, len(runs), runs)
				}
				if a.Version != 3 || !slices.Equal(a.ContestEvidence, []string{"theirs", "ours"}) || !strings.HasSuffix(a.Scope, "-moved") {
					t.Fatalf("a at version %d with evidence %v in %q: want 3, [theirs ours], moved", a.Version, a.ContestEvidence, a.Scope)
				}
			},
		},
		{
			name: "a decay sweep in between: planned again on the swept salience",
			between: func(t *testing.T, a, _ *membrane.Record, _ *membrane.Idempotency) {
				res, err := shared.DecaySweep(ctx, membrane.SweepOptions{Now: t0.Add(time.Hour), Scopes: []string{a.Scope}})
				if err != nil || res.Changed == 0 {
					t.Fatalf("sweep: %v, %+v", err, res)
				}
			},
			check: func(t *testing.T, runs []seen, got *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 2 {
					t.Fatalf("err %v after %d runs, want success after 2", err, len(runs))
				}
				// The sweep bumps no version: only the salience it wrote
				// tells the guard.
				if runs[1].version != 1 || runs[1].salience >= runs[0].salience {
					t.Fatalf("runs read version %d, salience %v then %v: want version 1 and the swept, lower salience", runs[1].version, runs[0].salience, runs[1].salience)
				}
				if a.Version != 2 || a.Salience != runs[1].salience || got.Record.Salience != a.Salience {
					t.Fatalf("a at version %d, salience %v: want 2 and the swept %v", a.Version, a.Salience, runs[1].salience)
				}
			},
		},
		{
			// What a read torn by a concurrent commit looks like to the
			// guard: the version as read, another property not. A plan
			// made from it must not land (the evidence "torn" would be
			// lost).
			name: "a property changed in between, the version not: planned again",
			between: func(t *testing.T, a, _ *membrane.Record, _ *membrane.Idempotency) {
				raw(t, "MATCH (m:Memory {id: $id}) SET m.contestEvidence = coalesce(m.contestEvidence, []) + 'torn'", map[string]any{"id": a.ID})
			},
			check: func(t *testing.T, runs []seen, _ *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 2 || !slices.Equal(runs[1].evidence, []string{"torn"}) {
					t.Fatalf("err %v, runs %+v: want success after 2, the second reading [torn]", err, runs)
				}
				if a.Version != 2 || !slices.Equal(a.ContestEvidence, []string{"torn", "ours"}) {
					t.Fatalf("a at version %d with evidence %v: want 2, [torn ours]", a.Version, a.ContestEvidence)
				}
			},
		},
		{
			name: "the read record revised in between: planned again on its result",
			between: func(t *testing.T, _, b *membrane.Record, _ *membrane.Idempotency) {
				contest(t, b.ID, "theirs")
			},
			check: func(t *testing.T, runs []seen, _ *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 2 || runs[0].readVersion != 1 || runs[1].readVersion != 2 || a.Version != 2 {
					t.Fatalf("err %v, runs %+v, a at version %d: want b read at version 1 then 2, a at 2", err, runs, a.Version)
				}
			},
		},
		{
			name: "the record deleted in between: NOT_FOUND",
			between: func(t *testing.T, a, _ *membrane.Record, _ *membrane.Idempotency) {
				if _, err := shared.DeleteRecord(ctx, a.ID, func(r *membrane.Record, edges []membrane.AuditRef) (*membrane.AuditEntry, error) {
					return membrane.PlanDelete(r, edges, meta, t0)
				}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, runs []seen, _ *membrane.Revised, err error, a, _ *membrane.Record) {
				if membrane.ErrorCode(err) != membrane.ENOTFOUND || len(runs) != 1 || a != nil {
					t.Fatalf("err %v after %d runs, a %+v: want NOT_FOUND after 1, a deleted", err, len(runs), a)
				}
			},
		},
		{
			name: "the same request's key stored in between: its result replayed",
			idem: key(t, "same"),
			between: func(t *testing.T, a, _ *membrane.Record, idem *membrane.Idempotency) {
				if _, err := shared.Revise(ctx, idem, []string{a.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
					return membrane.Contest(locked[a.ID], "first", nil, meta, t0)
				}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, runs []seen, got *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) != 1 {
					t.Fatalf("err %v after %d runs, want the replay after 1", err, len(runs))
				}
				if a.Version != 2 || !slices.Equal(a.ContestEvidence, []string{"first"}) || !slices.Equal(got.Record.ContestEvidence, []string{"first"}) {
					t.Fatalf("a at version %d with evidence %v, answer %v: want the first request's alone", a.Version, a.ContestEvidence, got.Record.ContestEvidence)
				}
			},
		},
		{
			name: "the key stored for another request in between: CONFLICT",
			idem: key(t, "ours"),
			between: func(t *testing.T, a, _ *membrane.Record, idem *membrane.Idempotency) {
				other := *idem
				other.Fingerprint = membrane.Fingerprint("contest", "theirs")
				if _, err := shared.Revise(ctx, &other, []string{a.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
					return membrane.Contest(locked[a.ID], "theirs", nil, meta, t0)
				}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, runs []seen, _ *membrane.Revised, err error, a, _ *membrane.Record) {
				if membrane.ErrorCode(err) != membrane.ECONFLICT || a.Version != 2 || !slices.Equal(a.ContestEvidence, []string{"theirs"}) {
					t.Fatalf("err %v, a at version %d with evidence %v: want CONFLICT and the other request's change alone", err, a.Version, a.ContestEvidence)
				}
			},
		},
		{
			name:    "a change in between every unlocked run: the last run locks and lands",
			every:   true,
			between: func(t *testing.T, a, _ *membrane.Record, _ *membrane.Idempotency) { contest(t, a.ID, "theirs") },
			check: func(t *testing.T, runs []seen, _ *membrane.Revised, err error, a, _ *membrane.Record) {
				if err != nil || len(runs) < 2 {
					t.Fatalf("err %v after %d runs, want success after several", err, len(runs))
				}
				// One concurrent contest before each run but the last.
				theirs := len(runs) - 1
				want := append(slices.Repeat([]string{"theirs"}, theirs), "ours")
				if int(a.Version) != 2+theirs || !slices.Equal(a.ContestEvidence, want) || runs[len(runs)-1].version != int64(1+theirs) {
					t.Fatalf("a at version %d with evidence %v after %d runs (%+v): want %d, %v", a.Version, a.ContestEvidence, len(runs), runs, 2+theirs, want)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			recs := neo4jtest.Create(t, shared, t0, fact(scope, "a", 0.8, &membrane.LifecycleInput{HalfLifeSeconds: hour}),
				fact(scope, "b", 0.8, &membrane.LifecycleInput{HalfLifeSeconds: hour}))
			a, b := recs[0], recs[1]
			neo4j.SetBeforeReviseWrite(db, func(attempt int) {
				if tc.between != nil && (attempt == 1 || tc.every) {
					tc.between(t, a, b, tc.idem)
				}
			})
			t.Cleanup(func() { neo4j.SetBeforeReviseWrite(db, nil) })
			var runs []seen
			got, err := db.Revise(ctx, tc.idem, []string{a.ID}, []string{b.ID}, func(locked, read map[string]*membrane.Record) (*membrane.Change, error) {
				r := locked[a.ID]
				s := seen{version: r.Version, salience: r.Salience, evidence: r.ContestEvidence}
				if rb := read[b.ID]; rb != nil {
					s.readVersion = rb.Version
				}
				runs = append(runs, s)
				c, err := membrane.Contest(r, "ours", nil, meta, t0)
				if err == nil && tc.move {
					c.Result.Scope = scope + "-moved" // c.Result is the update of a
				}
				return c, err
			})
			after, ferr := shared.FindRecordByID(ctx, a.ID)
			if ferr != nil && membrane.ErrorCode(ferr) != membrane.ENOTFOUND {
				t.Fatal(ferr)
			}
			tc.check(t, runs, got, err, after, b)
		})
	}
}

// TestHotRecordRevisionsAllLand runs revisions of one record from many
// goroutines at once: whatever the interleaving, every one lands, each
// planned on the one before (the record ends at one version per revision
// with every contest's evidence), since a revision whose unlocked runs
// keep failing on the busy record takes its locks for its last run.
func TestHotRecordRevisionsAllLand(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	rec := neo4jtest.Create(t, db, t0, fact(neo4jtest.Scope(t), "hot", 0.5, nil))[0]
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ref := fmt.Sprint("w", w, "-", i)
				_, err := db.Revise(ctx, nil, []string{rec.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
					return membrane.Contest(locked[rec.ID], ref, nil, membrane.RevisionMeta{Actor: "test"}, t0)
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a revision of the hot record failed: %v", err)
	}
	got, err := db.FindRecordByID(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	evidence := slices.Clone(got.ContestEvidence)
	slices.Sort(evidence)
	if got.Version != 1+writers*each || len(slices.Compact(evidence)) != writers*each {
		t.Fatalf("the record at version %d with %d distinct references, want %d and %d", got.Version, len(evidence), 1+writers*each, writers*each)
	}
}
