package neo4j_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// reclassify revises record id to sensitivity sens and nothing else (its
// payload unchanged), as consolidation does when it raises a competence.
func reclassify(t *testing.T, db *neo4j.DB, id string, sens membrane.Sensitivity) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	_, err := db.Revise(ctx, nil, []string{id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		n := *locked[id]
		n.Sensitivity = sens
		n.Version++
		n.UpdatedAt = time.Now().UTC()
		return &membrane.Change{Updates: []*membrane.Record{&n}, Result: &n}, nil
	})
	if err != nil {
		t.Fatalf("reclassify %s to %s: %v", id, sens, err)
	}
}

// TestSealOnSensitivityChange: a revision that changes only a record's
// sensitivity across the encryption threshold changes how it is stored:
// raised to a sealed level, no property holds its text (payload sealed,
// plaintext terms and copies gone, blind terms written); lowered below it,
// the payload is in clear again with plain search terms and no blind terms,
// and a reader of the lower level finds it by text.
func TestSealOnSensitivityChange(t *testing.T) {
	db := neo4jtest.DB(t)
	words := []string{"lighthouse", "guards", "smuggler", "tunnels"}
	tests := []struct {
		name     string
		from, to membrane.Sensitivity
		sealed   bool
	}{
		{"medium to high", membrane.SensitivityMedium, membrane.SensitivityHigh, true},
		{"low to hyper", membrane.SensitivityLow, membrane.SensitivityHyper, true},
		{"high to medium", membrane.SensitivityHigh, membrane.SensitivityMedium, false},
		{"hyper to public", membrane.SensitivityHyper, membrane.SensitivityPublic, false},
		{"high to hyper", membrane.SensitivityHigh, membrane.SensitivityHyper, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			id := sealedFact(t, db, scope, tt.from, "lighthouse", "guards", "smuggler tunnels")
			reclassify(t, db, id, tt.to)
			p := nodeProps(t, id)
			if p["sensitivity"] != string(tt.to) {
				t.Fatalf("sensitivity = %v, want %s", p["sensitivity"], tt.to)
			}
			if tt.sealed {
				if !membrane.IsSealed(fmt.Sprint(p["payload"])) || p["encrypted"] != true || p["blindTerms"] == nil {
					t.Fatalf("not sealed: payload %v, encrypted %v, blindTerms %v", p["payload"], p["encrypted"], p["blindTerms"])
				}
				for k, v := range p {
					s := strings.ToLower(fmt.Sprint(v))
					for _, w := range words {
						if strings.Contains(s, w[:5]) {
							t.Errorf("property %s holds %q in clear: %s", k, w, s)
						}
					}
				}
				return
			}
			if membrane.IsSealed(fmt.Sprint(p["payload"])) || p["encrypted"] != nil || p["blindTerms"] != nil || p["blindKeyId"] != nil {
				t.Fatalf("still sealed: payload %v, encrypted %v, blindTerms %v", p["payload"], p["encrypted"], p["blindTerms"])
			}
			if terms := fmt.Sprint(p["searchTerms"]); !strings.Contains(terms, "lighthous") || p["subject"] != "lighthouse" {
				t.Fatalf("plain terms missing: searchTerms %q, subject %v", terms, p["subject"])
			}
			got, _ := retrieveAs(t, db, trustAt(tt.to, scope), "smugglers", time.Now().Add(time.Minute).UTC())
			if !slices.Equal(got, []string{id}) {
				t.Fatalf("retrieve after lowering: %v, want %s", got, id)
			}
		})
	}
}

// built is a record of payload p (episodic or plan graph) in scope, created at at with sensitivity
// sens, stored with embedding vec (when not nil) as the system.
func built(t *testing.T, db *neo4j.DB, scope string, sens membrane.Sensitivity, at time.Time, p membrane.PayloadInput, vec []float64) string {
	t.Helper()
	typ := membrane.TypeEpisodic
	if p.PlanGraph != nil {
		typ = membrane.TypePlanGraph
	}
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: typ, Scope: &scope, Sensitivity: &sens, Payload: p}, at)
	if err != nil {
		t.Fatal(err)
	}
	in := &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "test", at)}
	if vec != nil {
		in.Embedding, in.EmbeddingModel = vec, "test"
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{in}); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// count runs a counting statement directly against the database.
func count(t *testing.T, stmt string, params map[string]any) int64 {
	t.Helper()
	drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(context.Background())
	res, err := driver.ExecuteQuery(t.Context(), drv, stmt, params, driver.EagerResultTransformer)
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("%s: %v", stmt, err)
	}
	n, _ := res.Records[0].Values[0].(int64)
	return n
}

// TestSealTransitionDetaches: a record raised to a sealed level keeps
// nothing beside it that a record created sealed lacks: no embedding, no
// plan steps (ops and parameters in clear), no place in a session chain
// (its neighbours are linked to each other); lowered again, it is linked
// into its chain and gets its plan steps back. A plan created sealed has no
// plan steps.
func TestSealTransitionDetaches(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	base := time.Now().Add(-time.Hour).UTC()
	ep := func(min int, text string, vec []float64) string {
		at := base.Add(time.Duration(min) * time.Minute)
		return built(t, db, scope, membrane.SensitivityLow, at, membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{SessionID: "s",
			Timeline: []membrane.TimelineEvent{{T: at, EventKind: "message", Ref: "m", Summary: text}}}}, vec)
	}
	a, b, c := ep(0, "first", nil), ep(1, "second", []float64{0.1, 0.2, 0.3}), ep(2, "third", nil)
	plan := func(sens membrane.Sensitivity) string {
		return built(t, db, scope, sens, base, membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "deploy-" + string(sens),
			Nodes: []membrane.PlanNode{{ID: "n1", Op: "drain_secret_vault", Params: map[string]any{"host": "vault-7"}}, {ID: "n2", Op: "restart"}},
			Edges: []membrane.PlanEdge{{From: "n1", To: "n2", Kind: "control"}}}}, nil)
	}
	p, sealedPlan := plan(membrane.SensitivityLow), plan(membrane.SensitivityHigh)
	chain := func() string {
		ids := map[string]string{a: "a", b: "b", c: "c"}
		var links []string
		drv, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
		if err != nil {
			t.Fatal(err)
		}
		defer drv.Close(context.Background())
		res, err := driver.ExecuteQuery(t.Context(), drv, `MATCH (x:Memory)-[:NEXT]->(y:Memory) WHERE x.scope = $scope RETURN x.id, y.id`,
			map[string]any{"scope": scope}, driver.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			links = append(links, ids[r.Values[0].(string)]+ids[r.Values[1].(string)])
		}
		slices.Sort(links)
		return strings.Join(links, " ")
	}
	vectors := func(id string) int64 {
		return count(t, `MATCH (:Memory {id: $id})-[:HAS_EMBEDDING]->(v:MemoryVector) RETURN count(v)`, map[string]any{"id": id})
	}
	steps := func(id string) int64 {
		return count(t, `MATCH (:Memory {id: $id})-[:HAS_STEP]->(s:PlanStep) RETURN count(s)`, map[string]any{"id": id})
	}
	if got := steps(sealedPlan); got != 0 {
		t.Errorf("a plan created sealed has %d plan steps", got)
	}
	if chain() != "ab bc" || vectors(b) != 1 || steps(p) != 2 {
		t.Fatalf("before: chain %q, vectors %d, steps %d", chain(), vectors(b), steps(p))
	}
	reclassify(t, db, b, membrane.SensitivityHigh)
	reclassify(t, db, p, membrane.SensitivityHyper)
	if chain() != "ac" || vectors(b) != 0 || steps(p) != 0 {
		t.Errorf("raised: chain %q (want ac), vectors %d, steps %d (want none)", chain(), vectors(b), steps(p))
	}
	reclassify(t, db, b, membrane.SensitivityMedium)
	reclassify(t, db, p, membrane.SensitivityLow)
	reclassify(t, db, sealedPlan, membrane.SensitivityLow)
	if chain() != "ab bc" || steps(p) != 2 || steps(sealedPlan) != 2 {
		t.Errorf("lowered: chain %q (want ab bc), steps %d and %d (want 2)", chain(), steps(p), steps(sealedPlan))
	}
}
