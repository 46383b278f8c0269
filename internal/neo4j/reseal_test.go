package neo4j_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

func open(t *testing.T, keys []membrane.SealKey, active string) *neo4j.DB {
	t.Helper()
	s, err := membrane.NewSealer(membrane.SensitivityHigh, keys, active)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db, err := neo4j.Open(ctx, neo4j.Config{URI: os.Getenv("NEO4J_URI"), Database: "neo4j", Sealer: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	return db
}

func TestResealRetiresAKey(t *testing.T) {
	neo4jtest.DB(t) // the schema, and a clear failure when NEO4J_URI is unset
	suffix := membrane.NewID()
	oldKey := membrane.SealKey{ID: "old-" + suffix, Key: bytes.Repeat([]byte{7}, 32)}
	newKey := membrane.SealKey{ID: "new-" + suffix, Key: bytes.Repeat([]byte{9}, 32)}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	scope := neo4jtest.Scope(t)

	before := open(t, []membrane.SealKey{oldKey}, oldKey.ID)
	// The records end sealed with a key no other test has: remove them, so
	// that unscoped reads by other tests never meet them.
	t.Cleanup(func() {
		if err := before.DeleteScope(context.Background(), scope); err != nil {
			t.Error(err)
		}
	})
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

	newOnly := open(t, []membrane.SealKey{newKey}, newKey.ID)
	// Without the old key the record is served redacted (docs/operations.md,
	// "Unknown keys"), its payload never opened.
	if r, err := newOnly.FindRecordByID(ctx, id); err != nil || !r.Redacted || r.Payload != nil {
		t.Fatalf("a record sealed with the old key, without it: %+v, %v; want it redacted", r, err)
	}
	rotated := open(t, []membrane.SealKey{newKey, oldKey}, newKey.ID)
	if _, _, err := rotated.Reseal(ctx, newKey.ID); membrane.ErrorCode(err) != membrane.EINVALID {
		t.Fatalf("resealing the active key: %v", err)
	}
	recs, audits, err := rotated.Reseal(ctx, oldKey.ID)
	if err != nil || recs != 1 || audits != 1 {
		t.Fatalf("reseal = %d records, %d audits, %v", recs, audits, err)
	}
	r, err := newOnly.FindRecordByID(ctx, id)
	if err != nil || r.Payload.(*membrane.SemanticPayload).Object != "the secret" {
		t.Fatalf("after reseal, with the new key only: %+v, %v", r, err)
	}
	page, err := newOnly.FindAuditEntries(ctx, membrane.AuditFilter{RecordID: &id}, membrane.Page{First: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].Rationale != "Ingested observation from agent" {
		t.Fatalf("audit after reseal: %+v, %v", page, err)
	}
	if recs, audits, err = rotated.Reseal(ctx, oldKey.ID); recs != 0 || audits != 0 || err != nil {
		t.Fatalf("second reseal = %d, %d, %v", recs, audits, err)
	}
}
