package jobs_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

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
