package neo4j_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestUnknownKeyStart: records sealed under a key the server does not hold
// (a lost key, and a key changed under the same id) stop neither Migrate
// nor a start: Migrate counts them (Unreadable) and a start reports the
// count it stored, and reads serve every record: the unreadable ones
// redacted, never an error for the page.
func TestUnknownKeyStart(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("lost-"+suffix, 31)
	kept := neo4jtest.SealKey("kept-"+suffix, 32)
	// A key that sealed records, then changed under the same id: the
	// server holds the changed material.
	original := neo4jtest.SealKey("changed-"+suffix, 33)
	changed := neo4jtest.SealKey(original.ID, 36)
	scope, withLost := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	high := membrane.SensitivityHigh
	lostEntity := captureProject(t, withLost, writerAt(high, scope), scope, high, "Lost Harbour "+suffix)
	lostFact := sealedFact(t, withLost, scope, high, "lighthouse", "guards", "the lost harbour")
	withOriginal := neo4jtest.OpenSealing(t, []membrane.SealKey{original}, original.ID)
	if err := withOriginal.Start(t.Context(), true); err != nil { // records the original key's check value
		t.Fatal(err)
	}
	changedFact := sealedFact(t, withOriginal, scope, high, "lighthouse", "guards", "the changed harbour")
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept, changed}, kept.ID)
	readable := sealedFact(t, server, scope, high, "lighthouse", "guards", "the kept harbour")
	plain := sealedFact(t, server, scope, membrane.SensitivityLow, "lighthouse", "stands", "on the cliff")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if _, err := server.Migrate(ctx); err != nil {
		t.Fatalf("migrate with a key missing: %v", err)
	}
	// The four of this test (the lost key sealed the capture's event and
	// entity, and the fact), by their key ids (other tests' records under
	// their own keys are in the shared database too): the changed key's
	// record too. A start reports the count Migrate stored.
	if err := server.Start(ctx, false); err != nil {
		t.Fatalf("start with a key missing: %v", err)
	}
	byKey := server.UnreadableByKey()
	if byKey[lost.ID] != 3 || byKey[changed.ID] != 1 || byKey[kept.ID] != 0 {
		t.Fatalf("unreadable by key = %v, want %s: 3, %s: 1, %s: none", byKey, lost.ID, changed.ID, kept.ID)
	}
	if got := server.ChangedKeys(); !slices.Equal(got, []string{changed.ID}) {
		t.Fatalf("changed keys = %v, want [%s]", got, changed.ID)
	}
	if n := server.Unreadable(); n < 4 {
		t.Fatalf("unreadable = %d, want at least 4", n)
	}
	defer func() {
		rawRows(t, `MATCH (k:SealKey) WHERE k.id ENDS WITH $suffix DELETE k`, map[string]any{"suffix": suffix})
	}()

	hyper := membrane.NewContextWithTrust(t.Context(), trustAt(membrane.SensitivityHyper, scope))
	page, err := server.FindRecords(hyper, membrane.RecordFilter{Scopes: []string{scope}}, membrane.DefaultRecordOrder, membrane.Page{First: 100})
	if err != nil {
		t.Fatalf("records page with unreadable records: %v", err)
	}
	redacted := map[string]bool{}
	for _, r := range page.Items {
		redacted[r.ID] = r.Redacted
		if r.Redacted && r.Payload != nil {
			t.Fatalf("redacted record %s has a payload", r.ID)
		}
	}
	for id, want := range map[string]bool{lostEntity[0]: true, lostFact: true, changedFact: true, readable: false, plain: false} {
		got, ok := redacted[id]
		if !ok || got != want {
			t.Fatalf("record %s: listed %v, redacted %v; want listed, redacted %v", id, ok, got, want)
		}
	}
	r, err := server.FindRecordByID(hyper, lostFact)
	if err != nil || !r.Redacted {
		t.Fatalf("record(lost): %+v, %v; want it redacted", r, err)
	}
	// Its audit entries (rationale sealed) come back redacted, in a page
	// and per record, never as an error.
	audits, err := server.FindAuditEntries(hyper, membrane.AuditFilter{RecordID: &lostFact}, membrane.Page{First: 10})
	if err != nil || len(audits.Items) != 1 || audits.Items[0].Rationale != "" || audits.Items[0].RecordID != lostFact {
		t.Fatalf("auditLog(lost): %+v, %v; want its one entry, redacted", audits, err)
	}
	perRecord, err := server.AuditPagesForRecords(hyper, []string{lostFact, readable}, "", membrane.Page{First: 10})
	if err != nil || len(perRecord[lostFact].Items) != 1 || perRecord[readable].Items[0].Rationale == "" {
		t.Fatalf("Record.auditLog: %+v, %v", perRecord, err)
	}
	low := membrane.NewContextWithTrust(t.Context(), trustAt(membrane.SensitivityLow, scope))
	if _, err := server.FindRecordByID(low, lostFact); membrane.ErrorCode(err) != membrane.ENOTFOUND {
		t.Fatalf("record(lost) for a low reader: %v, want NOT_FOUND", err)
	}
	// Retrieve by text, and browsing (no query: the newest records, the
	// unreadable ones among them), leave the unreadable records out.
	for _, q := range []string{"lighthouse harbour", ""} {
		got, _ := retrieveAs(t, server, trustAt(membrane.SensitivityHyper, scope), q, time.Now().Add(time.Minute))
		if !slices.Contains(got, readable) || slices.Contains(got, changedFact) || slices.Contains(got, lostFact) {
			t.Fatalf("retrieve %q: %v, want %s among the hits and neither %s nor %s", q, got, readable, changedFact, lostFact)
		}
	}
}
