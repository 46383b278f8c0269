package neo4j_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestIdempotencyKeysExpire: prune forgets idempotency keys older than
// the retention, so that the keys every keyed write and every create with
// chosen ids leave do not pile up; a younger key still replays. The keys
// are written by a store whose clock is set in 1990, so that the shared
// test database's other keys, all of today, are never in reach.
func TestIdempotencyKeysExpire(t *testing.T) {
	db := neo4jtest.Open(t)
	scope := neo4jtest.Scope(t)
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	base := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)
	build := func(subject string) *membrane.Ingested {
		t.Helper()
		in := membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: subject, Predicate: "is", Object: "x"}}
		r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope, Payload: in}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "expiry", time.Now())}
	}
	keyed := func(subject string) *membrane.Idempotency {
		t.Helper()
		key := "expire-" + membrane.NewID()
		idem, err := membrane.NewIdempotency(&key, "createRecord", subject)
		if err != nil {
			t.Fatal(err)
		}
		return idem
	}
	create := func(at time.Time, idem *membrane.Idempotency, subject string) string {
		t.Helper()
		db.Now = func() time.Time { return at }
		recs, err := db.CreateRecords(ctx, idem, []*membrane.Ingested{build(subject)})
		if err != nil {
			t.Fatal(err)
		}
		return recs[0].ID
	}
	oldIdem, youngIdem := keyed("old"), keyed("young")
	oldID := create(base, oldIdem, "old")
	youngID := create(base.Add(2*time.Hour), youngIdem, "young")

	n, err := db.ExpireIdempotencyKeys(ctx, base.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Fatalf("expired %d keys, want the old one", n)
	}
	// The young key replays: the same request answers with its record.
	if id := create(base.Add(3*time.Hour), youngIdem, "young"); id != youngID {
		t.Fatalf("the young key wrote %s, want the replay of %s", id, youngID)
	}
	// The old key is gone: the same key now writes anew.
	if id := create(base.Add(3*time.Hour), oldIdem, "old"); id == oldID {
		t.Fatalf("the expired key replayed %s, want a new record", id)
	}
}
