package neo4j_test

import (
	"context"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// resealSetup returns a key to retire and its successor (their bytes
// repeated, under ids no other test uses), a system context, a scope of
// the test's own and a store sealing with the old key. The scope's records
// end sealed with keys no other test has, so they are deleted when the test
// ends: unscoped reads by other tests never meet them.
func resealSetup(t *testing.T, oldByte, newByte byte) (oldKey, newKey membrane.SealKey, ctx context.Context, scope string, before *neo4j.DB) {
	t.Helper()
	neo4jtest.DB(t) // the schema, and a clear failure when NEO4J_URI is unset
	suffix := membrane.NewID()
	oldKey = neo4jtest.SealKey("old-"+suffix, oldByte)
	newKey = neo4jtest.SealKey("new-"+suffix, newByte)
	ctx = membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	scope = neo4jtest.Scope(t)
	before = neo4jtest.OpenSealing(t, []membrane.SealKey{oldKey}, oldKey.ID)
	neo4jtest.DeleteAtEnd(t, before, scope)
	return oldKey, newKey, ctx, scope, before
}

func TestResealRetiresAKey(t *testing.T) {
	oldKey, newKey, ctx, scope, before := resealSetup(t, 7, 9)
	hi := membrane.SensitivityHigh
	ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
		IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Sensitivity: &hi}, Subject: "vault", Predicate: "holds", Object: "the secret"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := before.CreateRecords(ctx, nil, []*membrane.Ingested{ing}); err != nil {
		t.Fatal(err)
	}
	id := ing.Record.ID

	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	// Without the old key the record is served redacted (docs/operations.md,
	// "Unknown keys"), its payload never opened.
	if r, err := newOnly.FindRecordByID(ctx, id); err != nil || !r.Redacted || r.Payload != nil {
		t.Fatalf("a record sealed with the old key, without it: %+v, %v; want it redacted", r, err)
	}
	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	if _, err := rotated.Reseal(ctx, newKey.ID); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("resealing the active key: %v", err)
	}
	res, err := rotated.Reseal(ctx, oldKey.ID)
	if err != nil || res != (neo4j.ResealResult{Records: 1, Audits: 1}) {
		t.Fatalf("reseal = %+v, %v", res, err)
	}
	r, err := newOnly.FindRecordByID(ctx, id)
	if err != nil || r.Payload.(*membrane.SemanticPayload).Object != "the secret" {
		t.Fatalf("after reseal, with the new key only: %+v, %v", r, err)
	}
	page, err := newOnly.FindAuditEntries(ctx, membrane.AuditFilter{RecordID: &id}, membrane.Page{First: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].Rationale != "Ingested observation from agent" {
		t.Fatalf("audit after reseal: %+v, %v", page, err)
	}
	if res, err = rotated.Reseal(ctx, oldKey.ID); res != (neo4j.ResealResult{}) || err != nil {
		t.Fatalf("second reseal = %+v, %v", res, err)
	}
}

// TestResealSkipsWhatDoesNotOpen: a record or an audit entry whose value
// under the retired key does not open (damaged, or sealed with other
// material under the same id) is skipped and counted, and stays as it is;
// every other one is resealed. Before, the first such value stopped the
// reseal, and everything after it stayed under the key being retired.
func TestResealSkipsWhatDoesNotOpen(t *testing.T) {
	oldKey, newKey, ctx, scope, before := resealSetup(t, 3, 4)
	hi := membrane.SensitivityHigh
	var ids []string
	for _, obj := range []string{"the first secret", "the second secret", "the third secret"} {
		ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
			IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Sensitivity: &hi}, Subject: "vault", Predicate: "holds", Object: obj}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := before.CreateRecords(ctx, nil, []*membrane.Ingested{ing}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ing.Record.ID)
	}
	// The first record's payload and the second's audit rationale no
	// longer open under the old key (they authenticate under none).
	damaged := "mbx1:" + oldKey.ID + ":AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	raw(t, `MATCH (m:Memory {id: $id}) SET m.payload = $v`, map[string]any{"id": ids[0], "v": damaged})
	raw(t, `MATCH (a:AuditEntry {recordId: $id}) SET a.rationale = $v`, map[string]any{"id": ids[1], "v": damaged})

	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	want := neo4j.ResealResult{Records: 2, Audits: 2, SkippedRecords: 1, SkippedAudits: 1}
	if res, err := rotated.Reseal(ctx, oldKey.ID); err != nil || res != want {
		t.Fatalf("reseal = %+v, %v; want %+v", res, err, want)
	}
	// What opened is under the new key; what did not is as it was.
	newOnly := neo4jtest.OpenSealing(t, []membrane.SealKey{newKey}, newKey.ID)
	for i, obj := range []string{"", "the second secret", "the third secret"} {
		r, err := newOnly.FindRecordByID(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if p := raw(t, `MATCH (m:Memory {id: $id}) RETURN m.payload`, map[string]any{"id": ids[0]}); p[0].Values[0] != damaged || !r.Redacted {
				t.Fatalf("the skipped record: payload %v, redacted %v; want it as it was", p[0].Values[0], r.Redacted)
			}
			continue
		}
		if r.Redacted || r.Payload.(*membrane.SemanticPayload).Object != obj {
			t.Fatalf("record %d after the reseal, new key only: %+v", i, r)
		}
	}
	if p := raw(t, `MATCH (a:AuditEntry {recordId: $id}) RETURN a.rationale`, map[string]any{"id": ids[1]}); p[0].Values[0] != damaged {
		t.Fatalf("the skipped audit entry: rationale %v, want it as it was", p[0].Values[0])
	}
	// A second reseal finds only what it skipped, and skips it again.
	want = neo4j.ResealResult{SkippedRecords: 1, SkippedAudits: 1}
	if res, err := rotated.Reseal(ctx, oldKey.ID); err != nil || res != want {
		t.Fatalf("second reseal = %+v, %v; want %+v", res, err, want)
	}
}
