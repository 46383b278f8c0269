package neo4j_test

import (
	"maps"
	"slices"
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

// TestExpireJobRuns: prune's expiry forgets the runs that finished before
// the cutoff and keeps those that finished after it and those still under
// way, whenever they started.
func TestExpireJobRuns(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := t.Context()
	base := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC) // before any run another test records
	at := func(d time.Duration) *time.Time { x := base.Add(d); return &x }
	runs := map[string]*membrane.JobRun{
		"finished before": {FinishedAt: at(-time.Minute), Outcome: "succeeded"},
		"finished after":  {FinishedAt: at(time.Minute), Outcome: "failed"},
		"under way":       {},
	}
	ids := map[string]string{}
	for name, r := range runs {
		r.ID, r.Job, r.Trigger, r.Holder, r.StartedAt = membrane.NewID(), "decay", "manual", "test", base.Add(-time.Hour)
		ids[r.ID] = name
		if err := db.CreateJobRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		raw(t, `MATCH (r:JobRun) WHERE r.id IN $ids DETACH DELETE r`, map[string]any{"ids": slices.Collect(maps.Keys(ids))})
	})
	n, err := db.ExpireJobRuns(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range raw(t, `MATCH (r:JobRun) WHERE r.id IN $ids RETURN r.id`, map[string]any{"ids": slices.Collect(maps.Keys(ids))}) {
		left = append(left, ids[r.Values[0].(string)])
	}
	slices.Sort(left)
	if want := []string{"finished after", "under way"}; n != 1 || !slices.Equal(left, want) {
		t.Fatalf("expired %d, kept %q; want 1 expired and %q kept", n, left, want)
	}
}
