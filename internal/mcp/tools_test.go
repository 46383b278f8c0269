package mcp_test

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"encoding/json"
	"github.com/google/jsonschema-go/jsonschema"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// writerIn is a writer principal over scope, at ceiling medium.
func writerIn(scope string) membrane.Principal {
	return membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
}

// writerSession starts a server for a writer of a scope of the test's own
// and connects as the writer: it returns the scope, the server and the
// writer's client.
func writerSession(t *testing.T) (string, *testServer, *client) {
	t.Helper()
	scope := neo4jtest.Scope(t)
	w := writerIn(scope)
	srv := startServer(t, membranehttp.DefaultHandlerOptions(), w)
	return scope, srv, srv.connect(t, w.Actor, nil)
}

func TestToolsList(t *testing.T) {
	srv := startServer(t, membranehttp.DefaultHandlerOptions())
	c := srv.connect(t, srv.admin, nil)
	res, err := c.s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 100 || !strings.Contains(tool.Description, "Use ") {
			t.Errorf("%s: the description must tell a model when to use it: %q", tool.Name, tool.Description)
		}
		for what, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			b, _ := json.Marshal(schema)
			var s jsonschema.Schema
			if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" || len(s.Properties) == 0 {
				t.Errorf("%s: %s schema %s: want an object with properties (%v)", tool.Name, what, b, err)
			}
			for name := range s.Properties {
				if name != strings.ToLower(name) || strings.Contains(name, "-") {
					t.Errorf("%s: %s property %q is not snake_case", tool.Name, what, name)
				}
			}
		}
		if tool.Annotations == nil || tool.Annotations.Title == "" {
			t.Errorf("%s: no annotations", tool.Name)
		}
	}
	want := []string{"remember", "recall", "revise", "relate", "lineage", "forget", "record_outcome", "get_record", "list_records"}
	if !slices.Equal(mcp.ToolNames(), want) {
		t.Errorf("ToolNames() = %v, want %v", mcp.ToolNames(), want)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools/list = %v, want %v", names, want)
	}
}

// TestRememberRecallReviseLineage is the flow docs/mcp.md promises: a
// writer remembers a fact, recalls it, supersedes it, reads its lineage and
// history, and reads, lists, relates, contests and retracts records.
func TestRememberRecallReviseLineage(t *testing.T) {
	scope := neo4jtest.Scope(t)
	w := writerIn(scope)
	srv := startServer(t, membranehttp.DefaultHandlerOptions(), w)
	c := srv.connect(t, w.Actor, nil)

	var rem mcp.RememberOutput
	c.ok("remember", map[string]any{"content": map[string]any{"subject": "billing-service", "predicate": "uses_database", "object": "PostgreSQL 15"},
		"scope": scope, "tags": []string{"infra"}, "summary": "billing-service runs on PostgreSQL 15", "reason": "on-call needs it"}, &rem)
	if rem.Record.ID == "" || rem.Record.Type != "episodic" || rem.Record.Scope != scope || rem.Record.Sensitivity != "low" {
		t.Fatalf("remembered %+v", rem.Record)
	}
	var fact mcp.Record
	for _, r := range rem.Created {
		if r.Type == "semantic" {
			fact = r
		}
	}
	if fact.ID == "" || fact.Caption != "billing-service uses_database PostgreSQL 15" || len(rem.Edges) == 0 {
		t.Fatalf("remember created %+v with edges %+v, want the fact", rem.Created, rem.Edges)
	}
	if err := srv.db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}

	var rec mcp.RecallOutput
	c.ok("recall", map[string]any{"query": "which database does billing-service use", "scope": scope}, &rec)
	if len(rec.Hits) == 0 || len(rec.Hits) > mcp.DefaultRecallLimit || !slices.ContainsFunc(rec.Hits, func(h mcp.Hit) bool {
		return h.ID == fact.ID && strings.Contains(h.Text, "PostgreSQL 15") && h.Score > 0 && h.When != ""
	}) {
		t.Fatalf("recall = %+v, want the fact with its text", rec.Hits)
	}

	var nr mcp.Record
	c.ok("revise", map[string]any{"operation": "supersede", "id": fact.ID, "rationale": "migrated to Aurora",
		"record": map[string]any{"payload": map[string]any{"subject": "billing-service", "predicate": "uses_database", "object": "Aurora PostgreSQL",
			"evidence": []any{map[string]any{"source_type": "ticket", "source_id": "OPS-7"}}}}}, &nr)
	// What the new record leaves out is the old one's: scope, type, tags.
	if nr.Type != "semantic" || nr.Scope != scope || !slices.Equal(nr.Tags, []string{"infra"}) || nr.Status != "active" || nr.ID == fact.ID {
		t.Fatalf("superseded into %+v", nr)
	}

	var lin mcp.LineageOutput
	c.ok("lineage", map[string]any{"id": nr.ID}, &lin)
	if lin.Record.ID != nr.ID || lin.Current != nr.ID || len(lin.History) != 2 || lin.History[0].ID != fact.ID || lin.History[1].ID != nr.ID {
		t.Fatalf("lineage of the new fact: %+v", lin)
	}
	if !slices.Contains(lin.Edges, mcp.Edge{SourceID: nr.ID, Predicate: "supersedes", TargetID: fact.ID, Weight: 1}) ||
		!slices.ContainsFunc(lin.Nodes, func(n mcp.LineageNode) bool { return n.ID == fact.ID && n.Depth == 1 && n.Status == "superseded" }) {
		t.Fatalf("lineage of the new fact: nodes %+v edges %+v", lin.Nodes, lin.Edges)
	}
	if len(lin.Audit) == 0 || lin.Audit[0].Action != "create" || lin.Audit[0].Rationale != "migrated to Aurora" || lin.Audit[0].Actor != w.Actor {
		t.Fatalf("audit of the new fact: %+v", lin.Audit)
	}
	var old mcp.LineageOutput
	c.ok("lineage", map[string]any{"id": fact.ID, "direction": "descendants"}, &old)
	if old.Current != nr.ID || old.Record.Status != "superseded" {
		t.Fatalf("lineage of the old fact: current %s, record %+v", old.Current, old.Record)
	}

	// Recall now finds the new version, not the superseded one.
	if err := srv.db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.ok("recall", map[string]any{"query": "billing-service database", "scopes": []string{scope}, "types": []string{"semantic"}}, &rec)
	if len(rec.Hits) != 1 || rec.Hits[0].ID != nr.ID || !strings.Contains(rec.Hits[0].Text, "Aurora") {
		t.Fatalf("recall after the supersede = %+v", rec.Hits)
	}

	var got mcp.RecordDetail
	c.ok("get_record", map[string]any{"id": nr.ID}, &got)
	payload, _ := got.Payload.(map[string]any)
	if got.ID != nr.ID || payload["object"] != "Aurora PostgreSQL" || got.PayloadText != "" || got.Confidence <= 0 || got.UpdatedAt == "" {
		t.Fatalf("get_record = %+v", got)
	}

	var list mcp.ListRecordsOutput
	c.ok("list_records", map[string]any{"scope": scope, "types": []string{"semantic"}, "statuses": []string{"active"}}, &list)
	if len(list.Records) != 1 || list.Records[0].ID != nr.ID || list.HasMore {
		t.Fatalf("list_records = %+v", list)
	}

	var edge mcp.Edge
	c.ok("relate", map[string]any{"source_id": nr.ID, "predicate": "supports", "target_id": rem.Record.ID, "rationale": "same incident"}, &edge)
	if edge != (mcp.Edge{SourceID: nr.ID, Predicate: "supports", TargetID: rem.Record.ID, Weight: 1}) {
		t.Fatalf("relate = %+v", edge)
	}
	var contested mcp.Record
	c.ok("revise", map[string]any{"operation": "contest", "id": nr.ID, "contesting_ref": "https://tickets.example.com/OPS-9"}, &contested)
	if contested.Status != "contested" || contested.Version <= nr.Version {
		t.Fatalf("contested = %+v", contested)
	}
	var forgot mcp.ForgetOutput
	c.ok("forget", map[string]any{"id": nr.ID, "rationale": "rolled back"}, &forgot)
	if forgot.Action != "retracted" || forgot.Record == nil || forgot.Record.Status != "retracted" {
		t.Fatalf("forget = %+v", forgot)
	}
}

func TestRecordOutcomeForkMerge(t *testing.T) {
	scope, srv, c := writerSession(t)
	skill, err := srv.svc.Ingest.CreateRecord(srv.asAdmin(t), membrane.RecordInput{Type: membrane.TypeCompetence, Scope: &scope,
		Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{SkillName: "rotate credentials"}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out mcp.Record
	c.ok("record_outcome", map[string]any{"record_id": skill.ID, "status": "success", "rationale": "rotated in 4 min"}, &out)
	var got mcp.RecordDetail
	c.ok("get_record", map[string]any{"id": skill.ID}, &got)
	perf, _ := got.Payload.(map[string]any)["performance"].(map[string]any)
	if out.Version != 2 || perf["success_count"] != float64(1) {
		t.Fatalf("after the outcome: %+v, payload %v", out, got.Payload)
	}

	a, b := srv.createFact(t, scope, membrane.SensitivityLow, "cache-a"), srv.createFact(t, scope, membrane.SensitivityLow, "cache-b")
	var forked mcp.Record
	c.ok("revise", map[string]any{"operation": "fork", "id": a.ID, "record": map[string]any{"payload": map[string]any{
		"subject": "cache-a2", "predicate": "is", "object": "known", "evidence": []any{map[string]any{"source_type": "test", "source_id": "fork"}}}}}, &forked)
	var merged mcp.Record
	c.ok("revise", map[string]any{"operation": "merge", "ids": []string{a.ID, b.ID}, "record": map[string]any{"tags": []string{"merged"}, "payload": map[string]any{
		"subject": "cache", "predicate": "is", "object": "known", "evidence": []any{map[string]any{"source_type": "test", "source_id": "merge"}}}}}, &merged)
	if forked.Scope != scope || merged.Scope != scope || !slices.Equal(merged.Tags, []string{"merged"}) {
		t.Fatalf("forked %+v, merged %+v", forked, merged)
	}
	var lin mcp.LineageOutput
	c.ok("lineage", map[string]any{"id": merged.ID, "direction": "ancestors", "predicates": []string{"derived_from"}}, &lin)
	if len(lin.Nodes) != 2 {
		t.Fatalf("merged lineage nodes = %+v", lin.Nodes)
	}
}

// TestResultsStaySmall: max_chars and page sizes bound what a model gets.
func TestResultsStaySmall(t *testing.T) {
	scope, srv, c := writerSession(t)
	long := strings.Repeat("filler words about nothing in particular ", 200) + "the zeppelin-7 incident was caused by a full disk" +
		strings.Repeat(" and more filler after it", 200)
	var rem mcp.RememberOutput
	c.ok("remember", map[string]any{"content": long, "scope": scope, "kind": "observation"}, &rem)
	for i := range 12 {
		c.ok("remember", map[string]any{"content": "note number " + strings.Repeat("x", i), "scope": scope}, nil)
	}
	if err := srv.db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	var rec mcp.RecallOutput
	c.ok("recall", map[string]any{"query": "zeppelin-7 incident", "scope": scope, "max_chars": 80}, &rec)
	if len(rec.Hits) == 0 || rec.Hits[0].ID != rem.Record.ID {
		t.Fatalf("recall = %+v", rec.Hits)
	}
	if h := rec.Hits[0]; utf8.RuneCountInString(h.Text) > 80 || !strings.Contains(h.Text, "zeppelin") {
		t.Fatalf("hit text %q: want the matching part, at most 80 characters", h.Text)
	}
	c.ok("recall", map[string]any{"scope": scope}, &rec)
	if len(rec.Hits) != mcp.DefaultRecallLimit {
		t.Fatalf("recall without a limit gave %d hits, want %d", len(rec.Hits), mcp.DefaultRecallLimit)
	}
	for _, h := range rec.Hits {
		if utf8.RuneCountInString(h.Text) > mcp.DefaultHitChars {
			t.Fatalf("hit text of %d characters", utf8.RuneCountInString(h.Text))
		}
	}

	var got mcp.RecordDetail
	c.ok("get_record", map[string]any{"id": rem.Record.ID, "max_chars": 300}, &got)
	if got.Payload != nil || utf8.RuneCountInString(got.PayloadText) > 300 || !got.Truncated || utf8.RuneCountInString(got.Text) > 300 {
		t.Fatalf("get_record of a long record with max_chars 300: payload %v, payload_text %d, text %d", got.Payload != nil,
			utf8.RuneCountInString(got.PayloadText), utf8.RuneCountInString(got.Text))
	}

	// Paging: 13 records, pages of 5, each id once.
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		var list mcp.ListRecordsOutput
		args := map[string]any{"scope": scope, "types": []string{"episodic"}, "page_size": 5}
		if cursor != "" {
			args["cursor"] = cursor
		}
		c.ok("list_records", args, &list)
		for _, r := range list.Records {
			if seen[r.ID] || utf8.RuneCountInString(r.Text) > mcp.DefaultListChars {
				t.Fatalf("page %d: %s twice, or text of %d characters", page, r.ID, utf8.RuneCountInString(r.Text))
			}
			seen[r.ID] = true
		}
		if !list.HasMore {
			break
		}
		cursor = list.NextCursor
	}
	if len(seen) != 13 {
		t.Fatalf("paged through %d records, want 13", len(seen))
	}
	var def mcp.ListRecordsOutput
	c.ok("list_records", map[string]any{"scope": scope}, &def)
	if len(def.Records) != mcp.DefaultPageSize || !def.HasMore {
		t.Fatalf("list_records without a page size: %d records", len(def.Records))
	}
}

// TestReplicas: a client whose requests a load balancer spreads over
// several replicas works as with one: the HTTP transport keeps no session
// on the server.
func TestReplicas(t *testing.T) {
	scope := neo4jtest.Scope(t)
	w := writerIn(scope)
	srv := startServer(t, membranehttp.DefaultHandlerOptions(), w)
	replicas := []string{srv.URL, srv.serve(t), srv.serve(t)}
	var next atomic.Int64
	var hits [3]atomic.Int64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := next.Add(1) % 3 // round robin
		hits[i].Add(1)
		u, _ := url.Parse(replicas[i])
		r.SetURL(u)
	}})
	t.Cleanup(proxy.Close)
	lb := &testServer{URL: proxy.URL, keys: srv.keys}
	c := lb.connect(t, w.Actor, nil)
	var rem mcp.RememberOutput
	c.ok("remember", map[string]any{"content": "replicas share one database", "scope": scope}, &rem)
	if err := srv.db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		var rec mcp.RecallOutput
		c.ok("recall", map[string]any{"query": "replicas", "scope": scope}, &rec)
		if len(rec.Hits) != 1 || rec.Hits[0].ID != rem.Record.ID {
			t.Fatalf("recall through the balancer = %+v", rec.Hits)
		}
	}
	for i := range hits {
		if hits[i].Load() == 0 {
			t.Fatalf("replica %d got no request", i)
		}
	}
}

// TestIdempotentRetries: a write retried with its idempotency_key answers
// as the first did and writes nothing more; without one, retracting twice
// is a CONFLICT.
func TestIdempotentRetries(t *testing.T) {
	scope, srv, c := writerSession(t)
	args := map[string]any{"content": "retried once, remembered once", "scope": scope, "idempotency_key": "k-" + membrane.NewID()}
	var first, again mcp.RememberOutput
	c.ok("remember", args, &first)
	c.ok("remember", args, &again)
	if again.Record.ID != first.Record.ID || first.Replayed || !again.Replayed {
		t.Fatalf("first %+v, retry %+v", first.Record, again)
	}
	fact := srv.createFact(t, scope, membrane.SensitivityLow, "retracted once")
	retract := map[string]any{"operation": "retract", "id": fact.ID, "idempotency_key": "r-" + membrane.NewID()}
	var r1, r2 mcp.Record
	c.ok("revise", retract, &r1)
	c.ok("revise", retract, &r2)
	if r1.ID != r2.ID || r1.Version != r2.Version || r1.Status != "retracted" {
		t.Fatalf("retract %+v, retried %+v", r1, r2)
	}
	c.fail("CONFLICT", "revise", map[string]any{"operation": "retract", "id": fact.ID})
	var list mcp.ListRecordsOutput
	c.ok("list_records", map[string]any{"scope": scope, "types": []string{"episodic"}}, &list)
	if len(list.Records) != 1 {
		t.Fatalf("%d episodes after a retried remember", len(list.Records))
	}
}
