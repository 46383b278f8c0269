package membrane_test

import (
	"fmt"
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
	// A hub's tombstone stores at most MaxAuditRefs references and counts
	// the rest.
	for _, tc := range []struct{ edges, kept, omitted int }{
		{membrane.MaxAuditRefs, membrane.MaxAuditRefs, 0},
		{membrane.MaxAuditRefs + 1, membrane.MaxAuditRefs, 1},
		{12000, membrane.MaxAuditRefs, 12000 - membrane.MaxAuditRefs},
	} {
		edges := make([]membrane.AuditRef, tc.edges)
		for i := range edges {
			edges[i] = membrane.EdgeRef("MENTIONS", false, fmt.Sprint("m", i), 1, "")
		}
		a, err := membrane.PlanDelete(r, edges, meta, now)
		if err != nil || len(a.Related) != tc.kept || a.RelatedOmitted != tc.omitted || a.Related[0].RecordID != "m0" {
			t.Fatalf("%d edges: %d kept, %d omitted, err %v; want %d, %d", tc.edges, len(a.Related), a.RelatedOmitted, err, tc.kept, tc.omitted)
		}
	}
	r.Lifecycle.DeletionPolicy = membrane.DeleteNever
	if _, err := membrane.PlanDelete(r, nil, meta, now); membrane.ErrorCode(err) != membrane.EPRECONDITION {
		t.Fatalf("never: %v", err)
	}
	r.Lifecycle.DeletionPolicy = membrane.DeleteAutoPrune
	if _, err := membrane.PlanDelete(r, nil, membrane.RevisionMeta{Actor: "a", ExpectedVersion: new(int64(2))}, now); membrane.ErrorCode(err) != membrane.ECONFLICT {
		t.Fatalf("stale version: %v", err)
	}
	if _, err := membrane.PlanDelete(r, nil, membrane.RevisionMeta{}, now); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("no actor: %v", err)
	}
}
