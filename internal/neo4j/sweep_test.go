package neo4j_test

import (
	"math"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// t0 is when the test records are created; sweeps run at instants after it
// through the injected clock (SweepOptions.Now), never by waiting.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func fact(scope, subject string, salience float64, lc *membrane.LifecycleInput) membrane.RecordInput {
	return membrane.RecordInput{
		Type: membrane.TypeSemantic, Scope: ptr(scope), Salience: ptr(salience), Lifecycle: lc,
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: subject, Predicate: "is", Object: "x",
			Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "t"}}}},
	}
}

// inScope reads every record of scope by id.
func inScope(t *testing.T, db *neo4j.DB, scope string) map[string]*membrane.Record {
	t.Helper()
	page, err := db.FindRecords(sysCtx(), membrane.RecordFilter{Scopes: []string{scope}},
		membrane.DefaultRecordOrder, membrane.Page{First: membrane.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*membrane.Record{}
	for _, r := range page.Items {
		out[r.ID] = r
	}
	return out
}

func TestSweepMatchesEffectiveSalience(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	hour := ptr(int64(3600))
	recs := neo4jtest.Create(t, db, t0,
		fact(scope, "exponential", 0.8, &membrane.LifecycleInput{HalfLifeSeconds: hour}),
		fact(scope, "linear", 0.9, &membrane.LifecycleInput{HalfLifeSeconds: hour, Curve: ptr(membrane.DecayLinear)}),
		fact(scope, "linear floor", 0.9, &membrane.LifecycleInput{HalfLifeSeconds: hour, Curve: ptr(membrane.DecayLinear), MinSalience: ptr(0.05)}),
		fact(scope, "pinned", 0.7, &membrane.LifecycleInput{HalfLifeSeconds: hour, Pinned: ptr(true)}),
		fact(scope, "max age", 0.8, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(86400)), MaxAgeSeconds: ptr(int64(7200))}),
		fact(scope, "floor", 0.8, &membrane.LifecycleInput{HalfLifeSeconds: hour, MinSalience: ptr(0.3)}),
		fact(scope, "above one", 1.7, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(7))}),
		fact(scope, "one second", 1, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}),
		fact(scope, "thirty days", 1, nil),
		fact(scope, "reinforced", 0.5, &membrane.LifecycleInput{HalfLifeSeconds: hour}),
	)
	untouched := neo4jtest.Create(t, db, t0, fact(other, "other scope", 1, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}))[0]

	// A reinforce at a sub-second instant moves the anchor and the base.
	reinforceAt := t0.Add(1234*time.Second + 567891234*time.Nanosecond)
	reinforced := recs[len(recs)-1].ID
	revised, err := db.Revise(ctx, nil, []string{reinforced}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Reinforce(locked[reinforced], membrane.RevisionMeta{Actor: "test"}, reinforceAt)
	})
	if err != nil {
		t.Fatal(err)
	}
	rr := revised.Record
	if want := 0.5*math.Exp2(-(1234.567891234)/3600) + 0.1; math.Abs(rr.Lifecycle.BaseSalience-want) > 1e-12 {
		t.Fatalf("reinforced base = %v, want %v", rr.Lifecycle.BaseSalience, want)
	}

	for _, d := range []time.Duration{
		0, time.Millisecond, 30 * time.Minute, time.Hour, 2*time.Hour - time.Nanosecond, 2 * time.Hour,
		5*time.Hour + 7*time.Nanosecond, 30 * 24 * time.Hour, 400 * 24 * time.Hour,
	} {
		at := t0.Add(d)
		opts := membrane.SweepOptions{Now: at, Scopes: []string{scope}}
		res, err := db.DecaySweep(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Scanned != int64(len(recs)) {
			t.Fatalf("at +%v the sweep scanned %d records, want the %d in its scope", d, res.Scanned, len(recs))
		}
		got := inScope(t, db, scope)
		for _, r := range got {
			want := membrane.EffectiveSalience(r.Lifecycle.BaseSalience, r.Lifecycle, r.CreatedAt, at)
			if math.Abs(r.Salience-want) > 1e-9 {
				t.Errorf("at +%v %q: swept salience %.15f, Go formula %.15f", d, r.Payload.(*membrane.SemanticPayload).Subject, r.Salience, want)
			}
		}
		// The same instant again: nothing moves, and no value differs by
		// even one bit (the reference halved again on every sweep).
		again, err := db.DecaySweep(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if again.Changed != 0 {
			t.Fatalf("a second sweep at +%v changed %d records, want 0", d, again.Changed)
		}
		for id, r := range inScope(t, db, scope) {
			if r.Salience != got[id].Salience {
				t.Fatalf("second sweep at +%v moved %s from %v to %v", d, id, got[id].Salience, r.Salience)
			}
		}
	}
	// Bases and anchors are the revision's state, which sweeps never write.
	for _, r := range inScope(t, db, scope) {
		base := 0.0
		for _, c := range recs {
			if c.ID == r.ID {
				base = c.Lifecycle.BaseSalience
			}
		}
		if r.ID == reinforced {
			base = rr.Lifecycle.BaseSalience
		}
		if math.Abs(r.Lifecycle.BaseSalience-base) > 1e-12 || r.Version > 2 {
			t.Fatalf("%s: base %v version %d after sweeps, want base %v and no version bump", r.ID, r.Lifecycle.BaseSalience, r.Version, base)
		}
	}
	if got := inScope(t, db, other)[untouched.ID]; got.Salience != 1 {
		t.Fatalf("a record outside the sweep's scopes went from 1 to %v", got.Salience)
	}
}

// Reinforce after sweeps starts from the effective value at its instant:
// neither the undecayed base nor a compounded value.
func TestReinforceAfterSweeps(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	scope := neo4jtest.Scope(t)
	r := neo4jtest.Create(t, db, t0, fact(scope, "f", 0.8, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(3600))}))[0]
	at := t0.Add(time.Hour)
	for i := 0; i < 3; i++ {
		if _, err := db.DecaySweep(ctx, membrane.SweepOptions{Now: at, Scopes: []string{scope}}); err != nil {
			t.Fatal(err)
		}
	}
	revised, err := db.Revise(ctx, nil, []string{r.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Reinforce(locked[r.ID], membrane.RevisionMeta{Actor: "test"}, at)
	})
	if err != nil {
		t.Fatal(err)
	}
	n := revised.Record
	if math.Abs(n.Salience-0.5) > 1e-12 || n.Lifecycle.BaseSalience != n.Salience {
		t.Fatalf("reinforced after three sweeps at one half-life: salience %v base %v, want 0.4 + 0.1 = 0.5", n.Salience, n.Lifecycle.BaseSalience)
	}
}
