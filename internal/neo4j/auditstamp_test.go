package neo4j_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// moveRecord revises record id to sensitivity sens in scope, writing no
// audit entry of its own, as consolidation raising a competence does.
func moveRecord(t *testing.T, db *neo4j.DB, id string, sens membrane.Sensitivity, scope string) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	_, err := db.Revise(ctx, nil, []string{id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		n := *locked[id]
		n.Sensitivity, n.Scope = sens, scope
		n.Version++
		n.UpdatedAt = time.Now().UTC()
		return &membrane.Change{Updates: []*membrane.Record{&n}, Result: &n}, nil
	})
	if err != nil {
		t.Fatalf("move %s: %v", id, err)
	}
}

// auditSeen is what reader t learns of record id's audit entries: through
// auditLog filtered by record and by actor, Record.auditLog, and the
// metrics' count of entries over scopes.
func auditSeen(t *testing.T, db *neo4j.DB, trust membrane.Trust, id string, scopes []string) (byRecord, byActor, batch int, counted int64) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), trust)
	page := membrane.Page{First: 100}
	p, err := db.FindAuditEntries(ctx, membrane.AuditFilter{RecordID: &id}, page)
	if err != nil {
		t.Fatal(err)
	}
	byRecord = len(p.Items)
	actor := "stamp-writer"
	if p, err = db.FindAuditEntries(ctx, membrane.AuditFilter{Actor: &actor}, page); err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Items {
		if a.RecordID == id {
			byActor++
		}
	}
	pages, err := db.AuditPagesForRecords(ctx, []string{id}, "", page)
	if err != nil {
		t.Fatal(err)
	}
	if pages[id] != nil {
		batch = len(pages[id].Items)
	}
	m, err := db.Metrics(ctx, trust, scopes, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return byRecord, byActor, batch, m.AuditEntries
}

// entryProps returns the stored properties of record id's audit entries.
func entryProps(t *testing.T, id string) []map[string]any {
	t.Helper()
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	res, err := driver.ExecuteQuery(t.Context(), drv, "MATCH (:Memory {id: $id})-[:HAS_AUDIT]->(a:AuditEntry) RETURN properties(a)",
		map[string]any{"id": id}, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(res.Records))
	for i, r := range res.Records {
		out[i], _ = r.Values[0].(map[string]any)
	}
	return out
}

// TestAuditFollowsRecordMove: a record raised above a reader's ceiling, or
// moved out of its scopes, in place (consolidation raising a competence)
// takes its earlier audit entries with it: the reader no longer gets them
// from auditLog (by record or by actor), Record.auditLog or the metrics'
// count; entries now at a sealed level have their free text sealed.
func TestAuditFollowsRecordMove(t *testing.T) {
	db := neo4jtest.DB(t)
	tests := []struct {
		name   string
		to     membrane.Sensitivity
		moved  bool // to another scope
		sealed bool
	}{
		{name: "raised above the ceiling", to: membrane.SensitivityHigh, sealed: true},
		{name: "raised to redacted", to: membrane.SensitivityMedium},
		{name: "moved to another scope", to: membrane.SensitivityLow, moved: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
			at := time.Now().Add(-time.Minute).UTC()
			r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEpisodic, Scope: &scope,
				Sensitivity: ptr(membrane.SensitivityLow), Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{SessionID: "s",
					Timeline: []membrane.TimelineEvent{{T: at, EventKind: "message", Ref: "m", Summary: "pattern"}}}}}, at)
			if err != nil {
				t.Fatal(err)
			}
			in := &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "stamp-writer", "kept the lighthouse log", at)}
			sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
			if _, err := db.CreateRecords(sys, nil, []*membrane.Ingested{in}); err != nil {
				t.Fatal(err)
			}
			low := trustAt(membrane.SensitivityLow, scope)
			scopes := []string{scope, other}
			if a, b, c, n := auditSeen(t, db, low, r.ID, scopes); a != 1 || b != 1 || c != 1 || n != 1 {
				t.Fatalf("before: the reader sees %d, %d, %d entries and counts %d, want 1 each", a, b, c, n)
			}
			dest := scope
			if tt.moved {
				dest = other
			}
			moveRecord(t, db, r.ID, tt.to, dest)
			if a, b, c, n := auditSeen(t, db, low, r.ID, scopes); a+b+c != 0 || n != 0 {
				t.Errorf("after: the reader sees %d, %d, %d entries and counts %d, want none", a, b, c, n)
			}
			entries := entryProps(t, r.ID)
			if len(entries) != 1 {
				t.Fatalf("%d entries stored, want 1", len(entries))
			}
			e := entries[0]
			if integer(e["sensitivityLevel"]) != int64(tt.to.Level()) || e["scope"] != dest {
				t.Errorf("entry stamped %v/%v, want %d/%s", e["sensitivityLevel"], e["scope"], tt.to.Level(), dest)
			}
			if rat, _ := e["rationale"].(string); tt.sealed != membrane.IsSealed(rat) || (tt.sealed && strings.Contains(rat, "lighthouse")) {
				t.Errorf("rationale stored as %q, sealed %v wanted", rat, tt.sealed)
			}
			// A reader cleared for the record still reads the entry in clear.
			high := trustAt(membrane.SensitivityHyper, dest)
			p, err := db.FindAuditEntries(membrane.NewContextWithTrust(t.Context(), high), membrane.AuditFilter{RecordID: &r.ID}, membrane.Page{First: 10})
			if err != nil || len(p.Items) != 1 || p.Items[0].Rationale != "kept the lighthouse log" {
				t.Fatalf("cleared reader: %v, %+v", err, p)
			}
		})
	}
}

func integer(v any) int64 {
	n, _ := v.(int64)
	return n
}
