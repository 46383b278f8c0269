package neo4j_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestUnknownKeyStart: records sealed under a key the server does not hold
// (a lost key, and a key changed under the same id) do not stop its start
// (an earlier start failed in the entity-terms backfill with "cipher:
// message authentication failed"): they are counted (Unreadable), the
// migrations that skipped them are recorded with the server's keys and not
// run again at the next start with the same keys (only with a new one),
// and reads serve every record: the unreadable ones redacted, never an
// error for the page.
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
	if err := withOriginal.Migrate(t.Context()); err != nil { // records the original key's check value
		t.Fatal(err)
	}
	changedFact := sealedFact(t, withOriginal, scope, high, "lighthouse", "guards", "the changed harbour")
	server := neo4jtest.OpenSealing(t, []membrane.SealKey{kept, changed}, kept.ID)
	readable := sealedFact(t, server, scope, high, "lighthouse", "guards", "the kept harbour")
	plain := sealedFact(t, server, scope, membrane.SensitivityLow, "lighthouse", "stands", "on the cliff")

	// An earlier start: the entity has neither terms nor blind names, and
	// no migration has run.
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	names := []string{neo4j.SealedDigestsMigration, neo4j.BlindTermsMigration(), "seal_repair_v2"}
	if _, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (e:Memory) WHERE e.id IN $ids REMOVE e.terms, e.blindNames, e.digestKeyId
		WITH count(*) AS n OPTIONAL MATCH (g:Migration) WHERE g.name IN $names DETACH DELETE g`,
		map[string]any{"ids": lostEntity, "names": names}, driver.EagerResultTransformer); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := server.Migrate(ctx); err != nil {
		t.Fatalf("start with a key missing: %v", err)
	}
	// The four of this test (the lost key sealed the capture's event and
	// entity, and the fact), by their key ids (other tests' records under
	// their own keys are in the shared database too): the changed key's
	// record too, though no migration selected it.
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
	// The keyed-digest migration skipped the lost entity (it has neither
	// terms nor blind names, nor a key to compute them): recorded as
	// skipping, not done. (Other tests' starts may run it again meanwhile,
	// with their keys; they skip the same entity.)
	res, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (g:Migration {name: $name}) RETURN g.skipped`,
		map[string]any{"name": neo4j.SealedDigestsMigration}, driver.EagerResultTransformer)
	if err != nil || len(res.Records) != 1 || res.Records[0].Values[0] == nil {
		t.Fatalf("the keyed-digest migration is not recorded as skipping: %v %v", res, err)
	}
	// When it is due: a migration of this test's own name (the real ones
	// are shared with every test's start).
	name := "test_due_" + suffix
	rotated := neo4jtest.OpenSealing(t, []membrane.SealKey{kept, neo4jtest.SealKey("new-"+suffix, 34)}, kept.ID)
	type dueStep struct {
		step    string
		run     func() error
		db      *neo4j.DB
		wantDue bool
	}
	steps := []dueStep{
		{"never run", nil, server, true},
		{"skipped with the same keys", func() error { return server.FinishMigration(ctx, name, 3) }, server, false},
		{"with a new key", nil, rotated, true},
		{"skipped with the new key too", func() error { return rotated.FinishMigration(ctx, name, 1) }, server, false},
		{"done", func() error { return rotated.FinishMigration(ctx, name, 0) }, neo4jtest.OpenSealing(t, []membrane.SealKey{neo4jtest.SealKey("other-"+suffix, 35)}, "other-"+suffix), false},
	}
	defer func() { // before drv closes
		if _, err := driver.ExecuteQuery(context.Background(), drv, `MATCH (g:Migration) WHERE g.name STARTS WITH $name DELETE g
			WITH count(*) AS n MATCH (k:SealKey) WHERE k.id ENDS WITH $suffix DELETE k`,
			map[string]any{"name": "test_due_" + suffix, "suffix": suffix}, driver.EagerResultTransformer); err != nil {
			t.Error(err)
		}
	}()
	// Keys are told apart by their material, not their ids: a migration
	// run with wrong material under an id is due again once the right key
	// is back; and what replicas with different keys ran with is merged,
	// so that they do not make each other rescan.
	other := neo4jtest.OpenSealing(t, []membrane.SealKey{neo4jtest.SealKey("other-"+suffix, 35)}, "other-"+suffix)
	restored := neo4jtest.OpenSealing(t, []membrane.SealKey{original}, original.ID)
	wrong := neo4jtest.OpenSealing(t, []membrane.SealKey{changed}, changed.ID)
	steps = append(steps,
		dueStep{"wrong material: skipped", func() error { name += "_material"; return wrong.FinishMigration(ctx, name, 2) }, wrong, false},
		dueStep{"the right key restored under the same id", nil, restored, true},
		dueStep{"a replica with another key skipped too", func() error { return other.FinishMigration(ctx, name, 2) }, wrong, false},
	)
	for _, s := range steps {
		if s.run != nil {
			if err := s.run(); err != nil {
				t.Fatal(err)
			}
		}
		if due, err := s.db.MigrationDue(ctx, name); err != nil || due != s.wantDue {
			t.Fatalf("%s: due %v (%v), want %v", s.step, due, err, s.wantDue)
		}
	}

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
