package jobs_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

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
