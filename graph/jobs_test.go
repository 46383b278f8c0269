package graph_test

import (
	"io"
	"log/slog"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

func principal(role membrane.Role, ceiling membrane.Sensitivity, scopes ...string) *membrane.Trust {
	t, err := membrane.NewTrust(membrane.Principal{Actor: "user-" + string(role), Role: role, MaxSensitivity: ceiling, Scopes: scopes}, nil, nil)
	if err != nil {
		panic(err)
	}
	return &t
}

// jobsClient is a client authenticated by an API key as trust's principal
// (nil: a reader of public, unscoped records only) whose server runs jobs
// restricted to scope, on the clock c.
func jobsClient(t *testing.T, trust *membrane.Trust, scope string, c *gqltest.Clock) *client {
	t.Helper()
	db := neo4jtest.DB(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner, err := jobs.New(db, membrane.DefaultPolicy(), jobs.Config{Timeout: time.Minute, LeaseTTL: time.Minute,
		Holder: "graph-test", Scopes: []string{scope}, Consolidation: membrane.DefaultConsolidationOptions()}, log, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = runner.Stop(t.Context()) })
	w := gqltest.NewWiring(db, nil)
	w.Stores.Retrieval, w.Stores.Captures = nil, nil
	w.Stores.Deletes, w.Stores.Metrics, w.Stores.Jobs = db, db, runner
	w.Options.Now = c.Now
	r := w.Resolver()
	p := membrane.Principal{Actor: "public", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityPublic, Scopes: []string{}}
	if trust != nil {
		p = trust.Principal
	}
	secret := "key-" + membrane.NewID()
	key, err := membrane.NewAPIKey(membrane.HashKey(secret), p)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(membranehttp.NewHandler(r, db, membrane.NewKeyring([]membrane.APIKey{key}), log))
	t.Cleanup(srv.Close)
	return &client{&gqltest.Client{T: t, URL: srv.URL, DB: db, Key: secret, Actor: p.Actor, Keys: map[string]string{p.Actor: secret}}}
}

func TestAdminOnly(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(time.Now().UTC())
	for name, trust := range map[string]*membrane.Trust{
		"no principal": nil,
		"writer":       principal(membrane.RoleWriter, membrane.SensitivityHyper, "*"),
	} {
		t.Run(name, func(t *testing.T) {
			cl := jobsClient(t, trust, scope, c)
			cl.Fail("FORBIDDEN", `mutation { runJob(job: DECAY) { id } }`, nil)
			cl.Fail("FORBIDDEN", `query { jobRuns { nodes { id } } }`, nil)
			cl.Fail("FORBIDDEN", `mutation { deleteRecord(id: "x") { id } }`, nil)
		})
	}
}

type jobRun struct {
	ID, Job, Trigger, Holder string
	Slot                     *string
	Scopes                   []string
	StartedAt                string
	FinishedAt               *string
	Scanned, Changed         int
	Error                    *string
	Details                  map[string]any
	Outcome                  *string
}

const runSel = `id job trigger holder slot scopes startedAt finishedAt scanned changed error details`

func TestRunJobAndJobRuns(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	cl := jobsClient(t, principal(membrane.RoleAdmin, membrane.SensitivityHyper, "*"), scope, c)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = cl.Create(scope, "SEMANTIC", gqltest.Fact("f"), map[string]any{"lifecycle": map[string]any{"halfLifeSeconds": 3600}})
	}
	c.Add(time.Hour)
	var out struct{ RunJob jobRun }
	cl.Do(`mutation { runJob(job: DECAY) { `+runSel+` } }`, nil, &out)
	run := out.RunJob
	if run.Job != "DECAY" || run.Trigger != "MANUAL" || run.Holder != "graph-test" || run.Scanned != 3 || run.Changed != 3 ||
		run.Error != nil || run.FinishedAt == nil || run.Slot != nil || len(run.Scopes) != 1 {
		t.Fatalf("run = %+v", run)
	}
	if got := cl.get(ids[0]); math.Abs(got.Salience-0.5) > 1e-12 {
		t.Fatalf("salience one half-life on = %v", got.Salience)
	}
	cl.Do(`mutation { runJob(job: CONSOLIDATE) { `+runSel+` } }`, nil, &out)
	if out.RunJob.Details["factsCreated"] != float64(0) || out.RunJob.Error != nil {
		t.Fatalf("consolidation run = %+v", out.RunJob)
	}

	// The decay run is listed, newest first, and pages by cursor.
	var runs struct {
		JobRuns struct {
			Edges []struct {
				Cursor string
				Node   jobRun
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	q := `query($job: JobName, $after: String) { jobRuns(job: $job, first: 200, after: $after) { edges { cursor node { ` + runSel + ` } } pageInfo { hasNextPage endCursor } } }`
	found := false
	var after any
	for page := 0; page < 50 && !found; page++ {
		cl.Do(q, map[string]any{"job": "DECAY", "after": after}, &runs)
		for _, e := range runs.JobRuns.Edges {
			if e.Node.Job != "DECAY" {
				t.Fatalf("jobRuns(job: DECAY) listed %+v", e.Node)
			}
			found = found || e.Node.ID == run.ID && e.Node.Changed == 3
		}
		if !runs.JobRuns.PageInfo.HasNextPage {
			break
		}
		after = runs.JobRuns.PageInfo.EndCursor
	}
	if !found {
		t.Fatalf("run %s not listed by jobRuns", run.ID)
	}
	cl.Fail("BAD_USER_INPUT", `query { jobRuns(first: 501) { nodes { id } } }`, nil)
	cl.Fail("BAD_USER_INPUT", `query { jobRuns(after: "bm90IGEgY3Vyc29y") { nodes { id } } }`, nil)
}

func TestDeleteRecordAPI(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := gqltest.NewClock(time.Now().UTC())
	cl := jobsClient(t, principal(membrane.RoleAdmin, membrane.SensitivityHyper, "*"), scope, c)
	manual := cl.Create(scope, "ENTITY", map[string]any{"entity": map[string]any{"canonicalName": "payments"}}, nil)
	never := cl.Create(scope, "SEMANTIC", gqltest.Fact("kept"), map[string]any{"lifecycle": map[string]any{"deletionPolicy": "NEVER"}})
	cl.Do(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: MENTIONS, targetId: $t, actor: "a") { weight } }`,
		map[string]any{"s": never, "t": manual}, nil)

	var out struct {
		DeleteRecord struct {
			RecordID, Action, Actor, Rationale string
			RemovedEdges                       []string
			Previous                           map[string]any
		}
	}
	cl.Do(`mutation($id: ID!) { deleteRecord(id: $id, rationale: "retired service") { recordId action actor rationale removedEdges previous } }`,
		map[string]any{"id": manual}, &out)
	d := out.DeleteRecord
	if d.RecordID != manual || d.Action != "DELETE" || d.Actor != "user-admin" || d.Rationale != "deleted by an admin: retired service" ||
		len(d.RemovedEdges) != 1 || d.RemovedEdges[0] != "MENTIONS<-"+never || d.Previous["type"] != "ENTITY" {
		t.Fatalf("tombstone = %+v", d)
	}
	cl.Fail("NOT_FOUND", `query($id: ID!) { record(id: $id) { id } }`, map[string]any{"id": manual})
	var trail struct {
		AuditLog struct{ Nodes []struct{ Action string } }
	}
	cl.Do(`query($id: ID!) { auditLog(filter: {recordId: $id}) { nodes { action } } }`, map[string]any{"id": manual}, &trail)
	if n := trail.AuditLog.Nodes; len(n) != 3 || n[0].Action != "CREATE" || n[1].Action != "RELATE" || n[2].Action != "DELETE" {
		t.Fatalf("trail of the deleted record = %+v", n)
	}
	cl.Fail("FAILED_PRECONDITION", `mutation($id: ID!) { deleteRecord(id: $id) { id } }`, map[string]any{"id": never})
	auto := cl.Create(scope, "SEMANTIC", gqltest.Fact("auto"), nil)
	cl.Fail("CONFLICT", `mutation($id: ID!) { deleteRecord(id: $id, expectedVersion: 7) { id } }`, map[string]any{"id": auto})
	cl.Fail("NOT_FOUND", `mutation($id: ID!) { deleteRecord(id: $id) { id } }`, map[string]any{"id": manual})
}

func TestRecordOutcomeAPI(t *testing.T) {
	scope := neo4jtest.Scope(t)
	cl := newClient(t)
	comp := cl.Create(scope, "COMPETENCE", map[string]any{"competence": map[string]any{"skillName": "deploy",
		"performance": map[string]any{"successCount": 1, "failureCount": 0, "successRate": 1}}}, nil)
	plan := cl.Create(scope, "PLAN_GRAPH", map[string]any{"planGraph": map[string]any{"planId": "p1",
		"nodes": []any{map[string]any{"id": "a", "op": "checkout"}, map[string]any{"id": "b", "op": "build"}},
		"edges": []any{map[string]any{"from": "a", "to": "b", "kind": "CONTROL"}}}}, nil)
	sem := cl.Create(scope, "SEMANTIC", gqltest.Fact("x"), nil)
	q := `mutation($id: ID!, $s: OutcomeStatus!, $k: String) { recordOutcome(recordId: $id, status: $s, actor: "agent-1", rationale: "ran it", idempotencyKey: $k) {
	  version payload { ... on CompetencePayload { performance { successCount failureCount successRate } }
	                    ... on PlanGraphPayload { metrics { executionCount failureRate } } }
	  auditLog(first: 10) { nodes { action actor rationale previous } } } }`
	type result struct {
		RecordOutcome struct {
			Version int
			Payload struct {
				Performance *struct {
					SuccessCount, FailureCount int
					SuccessRate                float64
				}
				Metrics *struct {
					ExecutionCount int
					FailureRate    float64
				}
			}
			AuditLog struct {
				Nodes []struct {
					Action, Actor, Rationale string
					Previous                 map[string]any
				}
			}
		}
	}
	var out result
	cl.Do(q, map[string]any{"id": comp, "s": "FAILURE", "k": "outcome-" + comp}, &out)
	cl.Do(q, map[string]any{"id": comp, "s": "FAILURE", "k": "outcome-" + comp}, &out) // a retry: replayed, not counted twice
	p := out.RecordOutcome.Payload.Performance
	last := out.RecordOutcome.AuditLog.Nodes[len(out.RecordOutcome.AuditLog.Nodes)-1]
	if p.SuccessCount != 1 || p.FailureCount != 1 || p.SuccessRate != 0.5 || out.RecordOutcome.Version != 2 ||
		last.Action != "OUTCOME" || last.Actor != cl.Actor || last.Rationale != "outcome failure recorded: ran it" || last.Previous["performance"] == nil {
		t.Fatalf("competence after a failure = %+v", out.RecordOutcome)
	}
	for _, s := range []string{"SUCCESS", "PARTIAL"} {
		cl.Do(q, map[string]any{"id": plan, "s": s}, &out)
	}
	if m := out.RecordOutcome.Payload.Metrics; m.ExecutionCount != 2 || m.FailureRate != 0.5 {
		t.Fatalf("plan metrics = %+v", m)
	}
	cl.Fail("FAILED_PRECONDITION", q, map[string]any{"id": sem, "s": "SUCCESS"})
	cl.Fail("NOT_FOUND", q, map[string]any{"id": "missing", "s": "SUCCESS"})
}

func TestMetricsAreGatedByTrust(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	c := gqltest.NewClock(time.Now().UTC())
	seed := jobsClient(t, principal(membrane.RoleAdmin, membrane.SensitivityHyper, "*"), scope, c)
	for _, s := range []string{"PUBLIC", "LOW", "MEDIUM", "HIGH", "HYPER"} {
		seed.Create(scope, "SEMANTIC", gqltest.Fact(s), map[string]any{"sensitivity": s, "salience": 0.3})
	}
	seed.Create(scope, "COMPETENCE", map[string]any{"competence": map[string]any{"skillName": "s",
		"performance": map[string]any{"successCount": 1, "failureCount": 3, "successRate": 0.25}}}, map[string]any{"salience": 0.9})
	plan := seed.Create(scope, "PLAN_GRAPH", map[string]any{"planGraph": map[string]any{"planId": "p",
		"metrics": map[string]any{"executionCount": 4, "failureRate": 0}}}, nil)
	seed.Do(`mutation($id: ID!) { reinforce(id: $id, actor: "a") { id } }`, map[string]any{"id": plan}, nil)
	seed.Create(other, "SEMANTIC", gqltest.Fact("elsewhere"), nil)

	type metrics struct {
		Metrics struct {
			TotalRecords, RedactedRecords, ActiveRecords, AuditEntries int
			Records                                                    []struct {
				Type, Status string
				Count        int
			}
			SalienceHistogram []struct {
				Min   float64
				Max   *float64
				Count int
			}
			AverageSalience, MemoryGrowthRate, RetrievalUsefulness, CompetenceSuccessRate, PlanReuseFrequency, RevisionRate float64
		}
	}
	q := `query($s: [String!]) { metrics(scopes: $s) { totalRecords redactedRecords activeRecords auditEntries records { type status count }
	  salienceHistogram { min max count } averageSalience memoryGrowthRate retrievalUsefulness competenceSuccessRate planReuseFrequency revisionRate } }`
	both := map[string]any{"s": []string{scope, other}}

	// A LOW reader of scope sees public and low in full, medium redacted
	// (counted, but not its audit trail, which it cannot list), high and
	// hyper not at all, and nothing of the other scope.
	var low metrics
	jobsClient(t, principal(membrane.RoleReader, membrane.SensitivityLow, scope), scope, c).Do(q, both, &low)
	m := low.Metrics
	if m.TotalRecords != 5 || m.RedactedRecords != 1 || m.ActiveRecords != 5 || m.AuditEntries != 5 ||
		math.Abs(m.RetrievalUsefulness-1.0/5) > 1e-9 || m.CompetenceSuccessRate != 0.25 || m.PlanReuseFrequency != 4 ||
		m.MemoryGrowthRate != 1 || m.RevisionRate != 0 {
		t.Fatalf("metrics for a low reader = %+v", m)
	}
	if h := m.SalienceHistogram; len(h) != 5 || h[1].Count != 3 || h[4].Count != 2 || h[4].Max != nil || *h[0].Max != 0.2 {
		t.Fatalf("histogram = %+v", h)
	}
	counts := map[string]int{}
	for _, r := range m.Records {
		counts[r.Type+"/"+r.Status] = r.Count
	}
	if counts["SEMANTIC/ACTIVE"] != 3 || counts["COMPETENCE/ACTIVE"] != 1 || counts["PLAN_GRAPH/ACTIVE"] != 1 {
		t.Fatalf("counts by type and status = %v", counts)
	}

	// Every scope and level: all seven; no principal at all: nothing
	// (none of these records is public and unscoped).
	var all, none metrics
	jobsClient(t, principal(membrane.RoleAdmin, membrane.SensitivityHyper, "*"), scope, c).Do(q, both, &all)
	jobsClient(t, nil, scope, c).Do(q, both, &none)
	if all.Metrics.TotalRecords != 8 || all.Metrics.RedactedRecords != 0 || none.Metrics.TotalRecords != 0 {
		t.Fatalf("admin sees %d (%d redacted), anonymous %d", all.Metrics.TotalRecords, all.Metrics.RedactedRecords, none.Metrics.TotalRecords)
	}
}

// jobRunByID pages through jobRuns(job: DECAY) for the run id.
func jobRunByID(t *testing.T, cl *client, id string) jobRun {
	t.Helper()
	var runs struct {
		JobRuns struct {
			Nodes    []jobRun
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	q := `query($after: String) { jobRuns(job: DECAY, first: 500, after: $after) { nodes { ` + runSel + ` outcome } pageInfo { hasNextPage endCursor } } }`
	var after any
	for {
		cl.Do(q, map[string]any{"after": after}, &runs)
		for _, n := range runs.JobRuns.Nodes {
			if n.ID == id {
				return n
			}
		}
		if !runs.JobRuns.PageInfo.HasNextPage {
			t.Fatalf("run %s not listed by jobRuns", id)
		}
		after = runs.JobRuns.PageInfo.EndCursor
	}
}

// A server process killed in the middle of a scheduled run leaves the run
// without an end and its lease unrenewed (the state is written here as the
// dead process wrote it; internal/jobs kills a real runner). Once the lease
// has expired, jobRuns shows the run ABANDONED, finished when it was found.
func TestJobRunsShowAbandonedRuns(t *testing.T) {
	scope := neo4jtest.Scope(t)
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	c := gqltest.NewClock(start)
	cl := jobsClient(t, principal(membrane.RoleAdmin, membrane.SensitivityHyper, "*"), scope, c)
	slot := start.Truncate(time.Hour)
	dead := &membrane.JobRun{ID: membrane.NewID(), Job: membrane.JobDecay, Trigger: membrane.TriggerSchedule, Holder: "dead-process",
		Slot: &slot, Scopes: []string{scope}, StartedAt: start}
	if _, err := cl.DB.UpdateLease(t.Context(), membrane.LeaseKey(membrane.JobDecay, []string{scope}), func(l membrane.Lease) (membrane.Lease, error) {
		return l.Acquire(dead.Holder, dead.ID, &slot, start, time.Minute)
	}); err != nil {
		t.Fatal(err)
	}
	if err := cl.DB.CreateJobRun(t.Context(), dead); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		advance time.Duration
		outcome string // "" while under way
	}{
		{"while its lease lasts: under way", 30 * time.Second, ""},
		{"once its lease expired: abandoned", time.Minute, "ABANDONED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.Add(tt.advance)
			got := jobRunByID(t, cl, dead.ID)
			if tt.outcome == "" {
				if got.Outcome != nil || got.FinishedAt != nil || got.Error != nil {
					t.Fatalf("a run under way = %+v", got)
				}
				return
			}
			if got.Outcome == nil || *got.Outcome != tt.outcome || got.FinishedAt == nil || got.Error == nil {
				t.Fatalf("dead process's run = %+v; want %s", got, tt.outcome)
			}
			if at, err := time.Parse(time.RFC3339Nano, *got.FinishedAt); err != nil || !at.Equal(c.Now()) {
				t.Fatalf("finishedAt = %s, want when it was found (%v)", *got.FinishedAt, c.Now())
			}
		})
	}
	// The lease is free again: a run on demand is not refused, and says how it ended.
	var out struct{ RunJob jobRun }
	cl.Do(`mutation { runJob(job: DECAY) { `+runSel+` outcome } }`, nil, &out)
	if out.RunJob.Outcome == nil || *out.RunJob.Outcome != "SUCCEEDED" {
		t.Fatalf("run after the abandoned one = %+v", out.RunJob)
	}
}
