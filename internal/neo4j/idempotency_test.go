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

// TestReplayEdgeToUnopenedRecord: a replay answers with the edges its key
// stored, and one whose other end no longer opens on the replaying server
// (sealed under a key it lacks) is shown as a read of relations shows it
// (the end redacted), not refused as a revision of that record would be
// (FAILED_PRECONDITION): the replay revises nothing.
func TestReplayEdgeToUnopenedRecord(t *testing.T) {
	suffix := membrane.NewID()
	lost := neo4jtest.SealKey("rlost-"+suffix, 61)
	kept := neo4jtest.SealKey("rkept-"+suffix, 62)
	scope, first := neo4jtest.SealedScope(t, []membrane.SealKey{lost}, lost.ID)
	src := sealedFact(t, first, scope, membrane.SensitivityLow, "replay-source", "is", "clear")
	tgt := sealedFact(t, first, scope, membrane.SensitivityHyper, "replay-target", "is", "sealed")
	ctx := sysCtx()
	key := "relate-" + suffix
	idem, err := membrane.NewIdempotency(&key, "addRelation", map[string]any{"a": src, "b": tgt})
	if err != nil {
		t.Fatal(err)
	}
	lock := []string{src, tgt}
	wrote, err := first.Revise(ctx, idem, lock, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		return membrane.Relate(locked[src], locked[tgt], membrane.PredSupports, nil, membrane.RevisionMeta{Actor: "test"}, time.Now())
	})
	if err != nil || len(wrote.Edges) != 1 {
		t.Fatalf("relate: %v %+v", err, wrote)
	}

	replaying := neo4jtest.OpenSealing(t, []membrane.SealKey{kept}, kept.ID)
	again, err := replaying.Revise(ctx, idem, lock, nil, func(_, _ map[string]*membrane.Record) (*membrane.Change, error) {
		t.Error("a replay planned again")
		return &membrane.Change{}, nil
	})
	if err != nil {
		t.Fatalf("replay on a server without the target's key: %v", err)
	}
	sameEdge := func(a, b membrane.Relation) bool {
		return a.CreatedAt.Equal(b.CreatedAt) && a.Predicate == b.Predicate && a.SourceID == b.SourceID &&
			a.TargetID == b.TargetID && a.Weight == b.Weight && a.Actor == b.Actor
	}
	if again.Record.ID != src || !slices.EqualFunc(again.Edges, wrote.Edges, sameEdge) {
		t.Fatalf("replayed %+v %+v, want the source and %+v", again.Record, again.Edges, wrote.Edges)
	}
}

// TestReplayNeedsFullView: a retried create with a chosen id answers with
// the record it created only to a request of the same principal that sees
// it in full. Narrowed below the record's level (it would see it redacted)
// or out of its scope, the retry gets the CONFLICT of any taken id: not the
// record, nor its redaction.
func TestReplayNeedsFullView(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	p := membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	in := fact(scope, "replayed", 0.5, nil)
	in.ID, in.Sensitivity = ptr(membrane.NewID()), ptr(membrane.SensitivityMedium)
	idem := membrane.ImpliedIdempotency(p.Actor, "createRecord", in, []string{*in.ID})
	createAs := func(maxSensitivity *membrane.Sensitivity, scopes []string) ([]*membrane.Record, error) {
		t.Helper()
		trust, err := membrane.NewTrust(p, maxSensitivity, scopes)
		if err != nil {
			t.Fatal(err)
		}
		r, err := membrane.DefaultPolicy().BuildRecord(in, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return db.CreateRecords(membrane.NewContextWithTrust(t.Context(), trust), idem,
			[]*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, p.Actor, "", time.Now())}})
	}
	for _, attempt := range []string{"first", "retry"} {
		recs, err := createAs(nil, nil)
		if err != nil || len(recs) != 1 || recs[0].ID != *in.ID || recs[0].Redacted {
			t.Fatalf("%s: %v %+v, want the record", attempt, err, recs)
		}
	}
	tests := []struct {
		name   string
		max    *membrane.Sensitivity
		scopes []string
	}{
		{"below its level", ptr(membrane.SensitivityLow), nil},
		{"out of its scope", nil, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := createAs(tc.max, tc.scopes)
			if membrane.ErrorCode(err) != membrane.ECONFLICT || membrane.ErrorMessage(err) != membrane.IDTaken || recs != nil {
				t.Fatalf("narrowed retry: %v %+v, want the CONFLICT of a taken id", err, recs)
			}
		})
	}
}
