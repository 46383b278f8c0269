package membrane_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func TestPrunable(t *testing.T) {
	base := func(f func(*membrane.Record)) *membrane.Record {
		r := &membrane.Record{ID: "r", Type: membrane.TypeSemantic, Status: membrane.StatusActive, CreatedAt: now, UpdatedAt: now,
			Lifecycle: membrane.Lifecycle{Curve: membrane.DecayExponential, HalfLifeSeconds: 60, LastReinforcedAt: now,
				BaseSalience: 1, DeletionPolicy: membrane.DeleteAutoPrune}}
		if f != nil {
			f(r)
		}
		return r
	}
	later := membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: now.Add(time.Hour)}}
	withRetention := later
	withRetention.HistoryRetention = 30 * time.Minute
	tests := []struct {
		name    string
		r       *membrane.Record
		lineage bool
		o       membrane.PruneOptions
		want    bool
	}{
		{"below the floor", base(nil), false, later, true},
		{"still salient", base(nil), false, membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: now.Add(time.Minute)}}, false},
		{"manual_only", base(func(r *membrane.Record) { r.Lifecycle.DeletionPolicy = membrane.DeleteManualOnly }), false, later, false},
		{"never", base(func(r *membrane.Record) { r.Lifecycle.DeletionPolicy = membrane.DeleteNever }), false, later, false},
		{"pinned", base(func(r *membrane.Record) { r.Lifecycle.Pinned = true }), false, later, false},
		{"floor above the prune floor", base(func(r *membrane.Record) { r.Lifecycle.MinSalience = 0.01 }), false, later, false},
		{"retracted", base(func(r *membrane.Record) { r.Status = membrane.StatusRetracted; r.Lifecycle.BaseSalience = 0 }), false, later, false},
		{"contested", base(func(r *membrane.Record) { r.Status = membrane.StatusContested }), false, later, false},
		{"lineage edge", base(nil), true, later, false},
		{"history after the retention", base(func(r *membrane.Record) { r.Status = membrane.StatusRetracted }), true, withRetention, true},
		{"history changed within the retention", base(func(r *membrane.Record) { r.UpdatedAt = now.Add(45 * time.Minute) }), true, withRetention, false},
		{"max age", base(func(r *membrane.Record) { r.Lifecycle.HalfLifeSeconds = 1 << 30; r.Lifecycle.MaxAgeSeconds = 60 }), false, later, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := membrane.Prunable(tt.r, tt.lineage, tt.o); got != tt.want {
				t.Fatalf("Prunable = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanDelete(t *testing.T) {
	r := &membrane.Record{ID: "r", Type: membrane.TypeEntity, Status: membrane.StatusActive, Salience: 0.5, Version: 3,
		Lifecycle: membrane.Lifecycle{BaseSalience: 0.7, DeletionPolicy: membrane.DeleteManualOnly}}
	meta := membrane.RevisionMeta{Actor: "admin", Rationale: "gdpr"}
	a, err := membrane.PlanDelete(r, []membrane.AuditRef{membrane.EdgeRef("MENTIONS", false, "x", 1, "")}, meta, now)
	if err != nil {
		t.Fatal(err)
	}
	if a.Action != membrane.AuditDelete || a.RecordID != "r" || a.Rationale != "deleted by an admin: gdpr" ||
		a.Previous["status"] != "active" || a.Previous["baseSalience"] != 0.7 || a.RemovedEdges()[0] != "MENTIONS<-x" {
		t.Fatalf("tombstone = %+v", a)
	}
	r.Lifecycle.DeletionPolicy = membrane.DeleteNever
	if _, err := membrane.PlanDelete(r, nil, meta, now); membrane.ErrorCode(err) != membrane.EPRECONDITION {
		t.Fatalf("never: %v", err)
	}
	r.Lifecycle.DeletionPolicy = membrane.DeleteAutoPrune
	if _, err := membrane.PlanDelete(r, nil, membrane.RevisionMeta{Actor: "a", ExpectedVersion: ptr(int64(2))}, now); membrane.ErrorCode(err) != membrane.ECONFLICT {
		t.Fatalf("stale version: %v", err)
	}
	if _, err := membrane.PlanDelete(r, nil, membrane.RevisionMeta{}, now); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("no actor: %v", err)
	}
}
