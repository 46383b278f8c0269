package membrane_test

import (
	"math"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func TestEffectiveSalience(t *testing.T) {
	t0 := now
	hour := int64(3600)
	exp := membrane.Lifecycle{Curve: membrane.DecayExponential, HalfLifeSeconds: hour, LastReinforcedAt: t0}
	with := func(f func(*membrane.Lifecycle)) membrane.Lifecycle {
		lc := exp
		f(&lc)
		return lc
	}
	tests := []struct {
		name string
		base float64
		lc   membrane.Lifecycle
		at   time.Duration // after t0 (createdAt = anchor = t0 unless set)
		want float64
	}{
		{"at the anchor", 0.8, exp, 0, 0.8},
		{"one half-life", 0.8, exp, time.Hour, 0.4},
		{"two half-lives", 0.8, exp, 2 * time.Hour, 0.2},
		{"half a half-life", 1, exp, 30 * time.Minute, math.Sqrt2 / 2},
		{"sub-second elapsed", 1, exp, 1500 * time.Millisecond, math.Exp2(-1.5 / 3600)},
		{"before the anchor does not grow", 0.8, exp, -time.Hour, 0.8},
		{"floor", 0.8, with(func(l *membrane.Lifecycle) { l.MinSalience = 0.3 }), 2 * time.Hour, 0.3},
		{"floor above base keeps base", 0.1, with(func(l *membrane.Lifecycle) { l.MinSalience = 0.3 }), 2 * time.Hour, 0.1},
		{"retracted 0 stays 0", 0, with(func(l *membrane.Lifecycle) { l.MinSalience = 0.3 }), time.Hour, 0},
		{"pinned", 0.8, with(func(l *membrane.Lifecycle) { l.Pinned = true }), 100 * time.Hour, 0.8},
		{"max age reached", 0.8, with(func(l *membrane.Lifecycle) { l.MaxAgeSeconds = 7200 }), 2 * time.Hour, 0},
		{"max age beats pinned", 0.8, with(func(l *membrane.Lifecycle) { l.MaxAgeSeconds = 7200; l.Pinned = true }), 3 * time.Hour, 0},
		{"before max age", 0.8, with(func(l *membrane.Lifecycle) { l.MaxAgeSeconds = 7200 }), time.Hour, 0.4},
		{"linear half at one half-life", 0.8, with(func(l *membrane.Lifecycle) { l.Curve = membrane.DecayLinear }), time.Hour, 0.4},
		{"linear quarter", 0.8, with(func(l *membrane.Lifecycle) { l.Curve = membrane.DecayLinear }), 90 * time.Minute, 0.2},
		{"linear reaches 0", 0.8, with(func(l *membrane.Lifecycle) { l.Curve = membrane.DecayLinear }), 3 * time.Hour, 0},
		{"linear floor", 0.8, with(func(l *membrane.Lifecycle) { l.Curve = membrane.DecayLinear; l.MinSalience = 0.05 }), 3 * time.Hour, 0.05},
		{"above 1 decays too", 2, exp, time.Hour, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := membrane.EffectiveSalience(tt.base, tt.lc, t0, t0.Add(tt.at))
			if math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("EffectiveSalience = %.15f, want %.15f", got, tt.want)
			}
		})
	}
}

// The reference multiplied the already-decayed value again on every sweep
// (§1.8). Evaluating from the base cannot compound: the value at an instant
// does not depend on how often it was evaluated before.
func TestEffectiveSalienceDoesNotCompound(t *testing.T) {
	lc := membrane.Lifecycle{Curve: membrane.DecayExponential, HalfLifeSeconds: 3600, LastReinforcedAt: now}
	at := now.Add(time.Hour)
	first := membrane.EffectiveSalience(1, lc, now, at)
	for i := 0; i < 5; i++ {
		if got := membrane.EffectiveSalience(1, lc, now, at); got != first {
			t.Fatalf("evaluation %d = %v, want %v", i+2, got, first)
		}
	}
	if first != 0.5 {
		t.Fatalf("one half-life = %v, want 0.5 (the reference gave 0.25 after two sweeps)", first)
	}
}

// decayed returns r as a sweep at `at` leaves it: only the stored salience
// changes, base and anchor stay.
func decayed(r *membrane.Record, at time.Time) *membrane.Record {
	n := *r
	n.Salience = membrane.EffectiveSalience(r.Lifecycle.BaseSalience, r.Lifecycle, r.CreatedAt, at)
	return &n
}

func TestReinforceAndPenalizeUseTheBase(t *testing.T) {
	p := membrane.DefaultPolicy()
	p.HalfLives[membrane.TypeSemantic] = 3600
	in := semanticInput()
	in.Salience = new(0.8)
	r, err := p.BuildRecord(in, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lifecycle.BaseSalience != 0.8 || r.Salience != 0.8 {
		t.Fatalf("new record base %v salience %v, want both 0.8", r.Lifecycle.BaseSalience, r.Salience)
	}
	meta := membrane.RevisionMeta{Actor: "a"}
	at := now.Add(time.Hour)
	// Three sweeps at one instant change nothing after the first; the
	// reinforce that follows starts from the effective value 0.4, not from a
	// compounded or undecayed one.
	swept := decayed(decayed(decayed(r, at), at), at)
	if swept.Salience != 0.4 || swept.Lifecycle.BaseSalience != 0.8 {
		t.Fatalf("swept = %v (base %v), want 0.4 (base 0.8)", swept.Salience, swept.Lifecycle.BaseSalience)
	}
	c, err := membrane.Reinforce(swept, meta, at)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Result
	if math.Abs(n.Salience-0.5) > 1e-12 || n.Lifecycle.BaseSalience != n.Salience || !n.Lifecycle.LastReinforcedAt.Equal(at) {
		t.Fatalf("reinforced: salience %v base %v anchor %v, want 0.5, 0.5, %v", n.Salience, n.Lifecycle.BaseSalience, n.Lifecycle.LastReinforcedAt, at)
	}
	if prev := c.Audits[0].Previous; prev["baseSalience"] != 0.8 || prev["salience"] != 0.4 {
		t.Fatalf("reinforce audit previous = %v", prev)
	}
	// The same reinforce on a record that was never swept gives the same
	// result: the stored salience does not matter, the base does.
	c2, err := membrane.Reinforce(r, meta, at)
	if err != nil || c2.Result.Salience != n.Salience {
		t.Fatalf("reinforce of the unswept record = %v, %v; want %v", c2.Result.Salience, err, n.Salience)
	}

	later := at.Add(time.Hour)
	pc, err := membrane.Penalize(decayed(n, later), 0.05, meta, later)
	if err != nil {
		t.Fatal(err)
	}
	pn := pc.Result
	if math.Abs(pn.Salience-0.2) > 1e-12 || pn.Lifecycle.BaseSalience != pn.Salience || !pn.Lifecycle.LastReinforcedAt.Equal(later) {
		t.Fatalf("penalized: salience %v base %v anchor %v, want 0.2 re-anchored at %v", pn.Salience, pn.Lifecycle.BaseSalience, pn.Lifecycle.LastReinforcedAt, later)
	}
}

func TestRetireZeroesTheBase(t *testing.T) {
	p := membrane.DefaultPolicy()
	r, err := p.BuildRecord(semanticInput(), now)
	if err != nil {
		t.Fatal(err)
	}
	c, err := membrane.Retract(r, membrane.RevisionMeta{Actor: "a"}, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	n := c.Result
	if n.Salience != 0 || n.Lifecycle.BaseSalience != 0 {
		t.Fatalf("retracted salience %v base %v, want 0 and 0", n.Salience, n.Lifecycle.BaseSalience)
	}
	if got := membrane.EffectiveSalience(n.Lifecycle.BaseSalience, n.Lifecycle, n.CreatedAt, now.Add(48*time.Hour)); got != 0 {
		t.Fatalf("a retracted record decays to %v, want it to stay 0", got)
	}
}
