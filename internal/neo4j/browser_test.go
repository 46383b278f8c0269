package neo4j_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// rows runs stmt directly against the database (an auto-commit
// transaction, so that statements with CALL … IN TRANSACTIONS run too) and
// returns its rows as maps.
func rows(t *testing.T, stmt string, params map[string]any) []map[string]any {
	t.Helper()
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	// Not t.Context(): cleanups run it too, after that has ended.
	ctx := context.Background()
	s := drv.NewSession(ctx, driver.SessionConfig{})
	defer s.Close(ctx)
	res, err := s.Run(ctx, stmt, params)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	out := make([]map[string]any, len(recs))
	for i, r := range recs {
		out[i] = r.AsMap()
	}
	return out
}

// captions returns the caption of record id's node and those of its audit
// entries (with their action, actor and time), oldest first.
func captions(t *testing.T, id string) (string, []map[string]any) {
	t.Helper()
	rec := rows(t, "MATCH (m:Memory {id: $id}) RETURN m.caption AS caption", map[string]any{"id": id})
	if len(rec) != 1 {
		t.Fatalf("record %s: %d nodes", id, len(rec))
	}
	c, _ := rec[0]["caption"].(string)
	return c, rows(t, `MATCH (a:AuditEntry {recordId: $id})
		RETURN a.caption AS caption, a.action AS action, a.actor AS actor, a.actorDetail AS detail, a.at AS at ORDER BY a.at, a.id`, map[string]any{"id": id})
}

// checkAuditCaptions fails unless every entry's caption is its action,
// actor (with its detail when stored in clear) and time to the second,
// and none holds any of words.
func checkAuditCaptions(t *testing.T, entries []map[string]any, words ...string) {
	t.Helper()
	if len(entries) == 0 {
		t.Fatal("no audit entries")
	}
	for _, e := range entries {
		at, _ := e["at"].(time.Time)
		by := fmt.Sprint(e["actor"])
		if d, _ := e["detail"].(string); d != "" && !membrane.IsSealed(d) {
			by += " (" + d + ")"
		}
		want := fmt.Sprintf("%s by %s at %s", e["action"], by, at.UTC().Truncate(time.Second).Format(time.RFC3339))
		if e["caption"] != want {
			t.Errorf("audit caption = %#v, want %q", e["caption"], want)
		}
		for _, w := range words {
			if strings.Contains(strings.ToLower(fmt.Sprint(e["caption"])), w) {
				t.Errorf("audit caption %q holds %q", e["caption"], w)
			}
		}
	}
}

// observed creates a fact at sensitivity sens as an ingest by principal
// dev of source agent-7 does (the source is the entry's detail), and
// returns its id.
func observed(t *testing.T, db *neo4j.DB, scope string, sens membrane.Sensitivity, subject, predicate, object string) string {
	t.Helper()
	ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
		IngestMeta: membrane.IngestMeta{Source: "agent-7", Scope: &scope, Sensitivity: &sens},
		Subject:    subject, Predicate: predicate, Object: object}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ing.Audit.Actor, ing.Audit.ActorDetail = "dev", "agent-7"
	if _, err := db.CreateRecords(sysCtx(), nil, []*membrane.Ingested{ing}); err != nil {
		t.Fatal(err)
	}
	return ing.Record.ID
}

// TestCaptions: every record and audit entry node carries a caption
// (what the Browser stylesheet shows), written with the node and rewritten
// when a revision changes what it should say: a record in clear is
// captioned by membrane.DisplayName, a sealed one by its type and id only,
// nothing of its text; an entry by its action, actor (and detail, unless
// sealed, also when a revision raised the record and sealed it) and time,
// never its rationale.
func TestCaptions(t *testing.T) {
	db := neo4jtest.DB(t)
	words := []string{"lighthouse", "guards", "smuggler", "tunnels"}
	plain := "lighthouse guards smuggler tunnels"
	tests := []struct {
		name     string
		from, to membrane.Sensitivity // to "": no revision
		sealed   bool
	}{
		{"medium", membrane.SensitivityMedium, "", false},
		{"high", membrane.SensitivityHigh, "", true},
		{"medium raised to high", membrane.SensitivityMedium, membrane.SensitivityHigh, true},
		{"hyper lowered to low", membrane.SensitivityHyper, membrane.SensitivityLow, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			id := observed(t, db, scope, tt.from, "lighthouse", "guards", "smuggler tunnels")
			if tt.to != "" {
				reclassify(t, db, id, tt.to)
			}
			caption, entries := captions(t, id)
			if tt.sealed {
				if caption != "semantic "+id {
					t.Errorf("caption = %q, want %q", caption, "semantic "+id)
				}
				checkAuditCaptions(t, entries, append(words, "agent-7")...)
				return
			}
			if caption != plain {
				t.Errorf("caption = %q, want %q", caption, plain)
			}
			checkAuditCaptions(t, entries)
			// Lowered, the entries written sealed stay sealed.
			if tt.to == "" && !strings.HasPrefix(fmt.Sprint(entries[0]["caption"]), "create by dev (agent-7) at ") {
				t.Errorf("create entry caption %q does not name the agent", entries[0]["caption"])
			}
		})
	}
}

// TestBookkeepingLabel: the internal node kinds carry the label
// Bookkeeping, which analysts filter out: written with the node by every
// path that creates one here.
func TestBookkeepingLabel(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx := sysCtx()
	labelled := func(t *testing.T, match string, params map[string]any) {
		t.Helper()
		got := rows(t, match+" RETURN n:Bookkeeping AS b, labels(n) AS labels", params)
		if len(got) == 0 {
			t.Fatalf("%s: no node", match)
		}
		for _, r := range got {
			if r["b"] != true {
				t.Errorf("%s: labels %v, no Bookkeeping", match, r["labels"])
			}
		}
	}
	tests := []struct {
		name  string
		write func(t *testing.T, scope string) (match string, params map[string]any)
	}{
		{"job run", func(t *testing.T, scope string) (string, map[string]any) {
			id := membrane.NewID()
			if err := db.CreateJobRun(ctx, &membrane.JobRun{ID: id, Job: membrane.JobName("decay"), Trigger: membrane.JobTrigger("manual"),
				Holder: "test", Scopes: []string{scope}, StartedAt: time.Now().UTC()}); err != nil {
				t.Fatal(err)
			}
			return "MATCH (n:JobRun {id: $id})", map[string]any{"id": id}
		}},
		{"job lease", func(t *testing.T, scope string) (string, map[string]any) {
			if _, err := db.UpdateLease(ctx, scope, func(l membrane.Lease) (membrane.Lease, error) { return l, nil }); err != nil {
				t.Fatal(err)
			}
			return "MATCH (n:JobLease {key: $key})", map[string]any{"key": scope}
		}},
		{"schema version", func(t *testing.T, scope string) (string, map[string]any) {
			store, node := neo4jtest.Open(t), schemaAt(t, 0)
			neo4j.SetSchemaNode(store, node, []string{scope})
			if err := store.Start(ctx, false); err != nil {
				t.Fatal(err)
			}
			return "MATCH (n:MembraneSchema {id: $id})", map[string]any{"id": node}
		}},
		{"deleted id", func(t *testing.T, scope string) (string, map[string]any) {
			r := neo4jtest.Create(t, db, t0, fact(scope, "gone", 0.5, nil))[0]
			if _, err := db.DeleteRecord(ctx, r.ID, func(r *membrane.Record, edges []membrane.AuditRef) (*membrane.AuditEntry, error) {
				return membrane.PlanDelete(r, edges, membrane.RevisionMeta{Actor: "test"}, t0.Add(time.Hour))
			}); err != nil {
				t.Fatal(err)
			}
			return "MATCH (n:DeletedRecordId {id: $id})", map[string]any{"id": r.ID}
		}},
		{"pruned id", func(t *testing.T, scope string) (string, map[string]any) {
			r := neo4jtest.Create(t, db, t0, fact(scope, "faded", 0.5, &membrane.LifecycleInput{HalfLifeSeconds: ptr(int64(1))}))[0]
			res, err := db.Prune(ctx, membrane.PruneOptions{SweepOptions: membrane.SweepOptions{Now: t0.Add(24 * time.Hour), Scopes: []string{scope}}})
			if err != nil || res.Changed != 1 {
				t.Fatalf("prune: %+v, %v", res, err)
			}
			// Its tombstone, written in Cypher, is captioned like any entry.
			checkAuditCaptions(t, rows(t, `MATCH (a:AuditEntry {recordId: $id})
				RETURN a.caption AS caption, a.action AS action, a.actor AS actor, a.actorDetail AS detail, a.at AS at`, map[string]any{"id": r.ID}))
			return "MATCH (n:DeletedRecordId {id: $id})", map[string]any{"id": r.ID}
		}},
		{"idempotency key", func(t *testing.T, scope string) (string, map[string]any) {
			r, err := membrane.DefaultPolicy().BuildRecord(fact(scope, "once", 0.5, nil), t0)
			if err != nil {
				t.Fatal(err)
			}
			idem := &membrane.Idempotency{Key: scope, Fingerprint: "f", Operation: "createRecord"}
			if _, err := db.CreateRecords(ctx, idem, []*membrane.Ingested{{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", t0)}}); err != nil {
				t.Fatal(err)
			}
			return "MATCH (n:IdempotencyKey) WHERE n.key CONTAINS $key", map[string]any{"key": scope}
		}},
		{"embedding", func(t *testing.T, scope string) (string, map[string]any) {
			id := built(t, db, scope, membrane.SensitivityLow, time.Now().UTC(), membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{
				Timeline: []membrane.TimelineEvent{{EventKind: "note", Summary: "embedded"}}}}, []float64{1, 0, 0})
			return "MATCH (:Memory {id: $id})-[:HAS_EMBEDDING]->(n)", map[string]any{"id": id}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			match, params := tt.write(t, neo4jtest.Scope(t))
			labelled(t, match, params)
		})
	}
}
