package membrane_test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

var captureNow = time.Date(2026, 5, 2, 10, 0, 0, 0, time.UTC)

func capture(t *testing.T, in membrane.CaptureInput) *membrane.Capture {
	t.Helper()
	c, err := membrane.DefaultPolicy().BuildCapture(in, captureNow)
	if err != nil {
		t.Fatalf("BuildCapture: %v", err)
	}
	return c
}

func entity(id, scope, name string, aliases ...string) *membrane.Record {
	p := &membrane.EntityPayload{CanonicalName: name, PrimaryType: "Other"}
	for _, a := range aliases {
		p.Aliases = append(p.Aliases, membrane.EntityAlias{Value: a})
	}
	return &membrane.Record{ID: id, Type: membrane.TypeEntity, Scope: scope, Status: membrane.StatusActive,
		CreatedAt: captureNow.Add(-time.Hour), Payload: p}
}

// edgeSet renders edges as "pred from>to" with the capture's own ids
// replaced by names, sorted.
func edgeSet(p *membrane.CapturePlan, names map[string]string) []string {
	var out []string
	for _, e := range p.Change.Edges {
		out = append(out, fmt.Sprintf("%s %s>%s", e.Predicate, names[e.SourceID], names[e.TargetID]))
	}
	sort.Strings(out)
	return out
}

func TestCaptureObservationWithFact(t *testing.T) {
	scope := "project:alpha"
	kind := "observation"
	c := capture(t, membrane.CaptureInput{
		Source: "agent-1", SourceKind: &kind, Scope: &scope, Tags: []string{"infra"},
		Content: map[string]any{"subject": "auth-service", "predicate": "uses_database", "object": "PostgreSQL"},
	})
	p := c.Primary
	ep, ok := p.Payload.(*membrane.EpisodicPayload)
	if !ok || p.Type != membrane.TypeEpisodic || p.Confidence != 0.7 || p.Lifecycle.HalfLifeSeconds != 3600 || p.Scope != scope ||
		p.Sensitivity != membrane.SensitivityLow || len(ep.Timeline) != 1 || ep.Timeline[0].EventKind != "observation" ||
		!strings.HasPrefix(ep.Timeline[0].Ref, "capture:") || ep.Environment.Context["capture_content"] == nil {
		t.Fatalf("primary = %+v payload %+v", p, p.Payload)
	}
	if !reflect.DeepEqual(c.Terms(), []string{"auth-service"}) {
		t.Errorf("terms = %v", c.Terms())
	}
	plan := c.Plan(nil, "principal")
	if len(plan.Created) != 2 || len(plan.Reused) != 0 || !reflect.DeepEqual(plan.NewTerms, []string{"auth-service"}) {
		t.Fatalf("plan created %d reused %v new %v", len(plan.Created), plan.Reused, plan.NewTerms)
	}
	ent, fact := plan.Created[0], plan.Created[1]
	ep2 := ent.Payload.(*membrane.EntityPayload)
	if ent.Type != membrane.TypeEntity || ep2.CanonicalName != "auth-service" || ep2.PrimaryType != "Concept" || ent.Scope != scope ||
		ent.Lifecycle.HalfLifeSeconds != 30*86400 || ent.Lifecycle.DeletionPolicy != membrane.DeleteManualOnly || ent.Confidence != 0.7 || len(ent.Tags) != 0 {
		t.Errorf("entity = %+v %+v", ent, ep2)
	}
	sp := fact.Payload.(*membrane.SemanticPayload)
	if fact.Type != membrane.TypeSemantic || sp.Subject != "auth-service" || sp.Predicate != "uses_database" || sp.Object != "PostgreSQL" ||
		sp.Evidence[0].SourceID != p.ID || sp.Evidence[0].SourceType != "episodic" || fact.Lifecycle.HalfLifeSeconds != 30*86400 ||
		!reflect.DeepEqual(fact.Tags, []string{"infra"}) || fact.Scope != scope || fact.Provenance.Sources[0].Ref != p.ID {
		t.Errorf("fact = %+v %+v", fact, sp)
	}
	names := map[string]string{p.ID: "primary", ent.ID: "entity", fact.ID: "fact"}
	want := []string{"about fact>entity", "derived_from fact>primary", "mentions primary>entity"}
	if got := edgeSet(plan, names); !reflect.DeepEqual(got, want) {
		t.Errorf("edges = %v, want %v", got, want)
	}
	if len(plan.Change.Audits) != 3 {
		t.Fatalf("audits = %d", len(plan.Change.Audits))
	}
	for i, a := range plan.Change.Audits {
		if a.Action != membrane.AuditCreate || a.Actor != "principal" || a.ActorDetail != "agent-1" || a.RecordID != plan.Change.Creates[i].ID {
			t.Errorf("audit %d = %+v", i, a)
		}
	}
	for _, e := range plan.Change.Edges {
		if e.Actor != "principal" || e.Weight != 1 || !e.CreatedAt.Equal(captureNow) {
			t.Errorf("edge %+v", e)
		}
	}
}

func TestCaptureResolvesEntitiesInItsScopeOnly(t *testing.T) {
	scope := "alpha"
	c := capture(t, membrane.CaptureInput{Source: "s", Scope: &scope,
		Content: map[string]any{"subject": "Auth  Service", "predicate": "runs_on", "object": "k8s", "tool": "Postgres"}})
	if !reflect.DeepEqual(c.Terms(), []string{"auth service", "postgres"}) {
		t.Fatalf("terms = %v", c.Terms())
	}
	older := entity("e-old", scope, "auth service")
	older.CreatedAt = captureNow.Add(-48 * time.Hour)
	retracted := entity("e-ret", scope, "Postgres")
	retracted.Status = membrane.StatusRetracted
	tests := []struct {
		name    string
		found   []*membrane.Record
		reused  []string
		created int
	}{
		{"nothing found: two entities and the fact", nil, nil, 3},
		{"same scope: reused", []*membrane.Record{entity("e1", scope, "Auth Service"), entity("e2", scope, "postgres")}, []string{"e1", "e2"}, 1},
		{"another scope or unscoped: never linked", []*membrane.Record{entity("x1", "beta", "auth service"), entity("x2", "", "postgres")}, nil, 3},
		{"retracted: not reused", []*membrane.Record{retracted}, nil, 3},
		{"by alias", []*membrane.Record{entity("pg", scope, "PostgreSQL", "postgres")}, []string{"pg"}, 2},
		{"canonical name before alias", []*membrane.Record{entity("alias", scope, "pg", "Postgres"), entity("canon", scope, "POSTGRES")}, []string{"canon"}, 2},
		{"oldest among equals", []*membrane.Record{entity("e-new", scope, "auth service"), older}, []string{"e-old"}, 2},
		{"not an entity: ignored", []*membrane.Record{{ID: "f", Type: membrane.TypeSemantic, Scope: scope, Payload: &membrane.SemanticPayload{Subject: "postgres"}}}, nil, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := c.Plan(tt.found, "a")
			if !reflect.DeepEqual(p.Reused, tt.reused) || len(p.Created) != tt.created {
				t.Fatalf("reused %v created %d, want %v %d", p.Reused, len(p.Created), tt.reused, tt.created)
			}
			mentions := 0
			for _, e := range p.Change.Edges {
				if e.Predicate == membrane.PredMentions && e.SourceID == c.Primary.ID {
					mentions++
				}
			}
			if mentions != 2 {
				t.Errorf("primary mentions %d entities, want 2", mentions)
			}
		})
	}
}

func TestCaptureMentionExtraction(t *testing.T) {
	c := capture(t, membrane.CaptureInput{Source: "s", Content: map[string]any{
		"entities": []any{
			map[string]any{"name": "PostgreSQL", "type": "Database", "aliases": []any{"postgres", "PG"}},
			"Kubernetes",
			map[string]any{"name": "pg"}, // an alias of the first: merged into it
			42,                           // ignored
		},
		"project": "Membrane",
		"path":    "/etc/hosts",
		"agent":   "planner",
		"text":    "unrelated",
		"fact":    map[string]any{"subject": "membrane", "predicate": "stores_in", "object": "postgres"},
	}})
	got := map[string]membrane.Mention{}
	for _, m := range c.Mentions {
		got[m.Name] = m
	}
	want := map[string]membrane.Mention{
		"planner":    {Name: "planner", Term: "planner", Type: "Agent"},
		"PostgreSQL": {Name: "PostgreSQL", Term: "postgresql", Type: "Database", Aliases: []string{"postgres", "PG"}},
		"Kubernetes": {Name: "Kubernetes", Term: "kubernetes", Type: "Concept"},
		"/etc/hosts": {Name: "/etc/hosts", Term: "/etc/hosts", Type: "File"},
		"Membrane":   {Name: "Membrane", Term: "membrane", Type: "Project"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mentions =\n%+v\nwant\n%+v", got, want)
	}
	if c.Triple == nil || c.Triple.Subject != "membrane" || c.Triple.Object != "postgres" {
		t.Fatalf("triple = %+v", c.Triple)
	}
	p := c.Plan(nil, "a")
	// 5 entities and the fact; the fact is about "membrane" (the project)
	// and mentions "postgres" (an alias of the PostgreSQL entity).
	if len(p.Created) != 6 {
		t.Fatalf("created %d", len(p.Created))
	}
	names := map[string]string{c.Primary.ID: "primary"}
	for _, r := range p.Created {
		if e, ok := r.Payload.(*membrane.EntityPayload); ok {
			names[r.ID] = e.CanonicalName
		} else {
			names[r.ID] = "fact"
		}
	}
	edges := edgeSet(p, names)
	for _, w := range []string{"about fact>Membrane", "mentions fact>PostgreSQL", "derived_from fact>primary", "mentions primary>Kubernetes"} {
		if !containsStr(edges, w) {
			t.Errorf("edges %v lack %q", edges, w)
		}
	}
	if len(edges) != 8 {
		t.Errorf("edges = %v", edges)
	}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestCapturePrimaryByKind(t *testing.T) {
	kind := func(s string) *string { return &s }
	summary := "deployed v2"
	reason := "first deploy of v2"
	t.Run("tool output", func(t *testing.T) {
		c := capture(t, membrane.CaptureInput{Source: "s", SourceKind: kind("tool_output"),
			Content: map[string]any{"tool_name": "bash", "args": map[string]any{"cmd": "ls"}, "result": "ok", "depends_on": []any{"0"}}})
		ep := c.Primary.Payload.(*membrane.EpisodicPayload)
		if c.Primary.Confidence != 0.9 || len(ep.ToolGraph) != 1 || ep.ToolGraph[0].Tool != "bash" || ep.ToolGraph[0].Args["cmd"] != "ls" ||
			ep.ToolGraph[0].DependsOn[0] != "0" || ep.Timeline[0].Summary != "ok" || c.Primary.Provenance.Sources[0].Kind != membrane.ProvenanceToolCall {
			t.Errorf("primary %+v", ep)
		}
		if len(c.Mentions) != 1 || c.Mentions[0].Name != "bash" || c.Mentions[0].Type != "Tool" {
			t.Errorf("mentions %+v", c.Mentions)
		}
	})
	t.Run("working state", func(t *testing.T) {
		c := capture(t, membrane.CaptureInput{Source: "s", SourceKind: kind("working_state"), Summary: &summary,
			Content: map[string]any{"thread": "t-1", "state": "blocked", "next_actions": []any{"ask"},
				"active_constraints": []any{map[string]any{"type": "budget", "key": "usd", "value": 5, "required": true}}}})
		w := c.Primary.Payload.(*membrane.WorkingPayload)
		if c.Primary.Type != membrane.TypeWorking || w.ThreadID != "t-1" || w.State != membrane.TaskBlocked || w.ContextSummary != summary ||
			len(w.ActiveConstraints) != 1 || !w.ActiveConstraints[0].Required || c.Primary.Confidence != 1 {
			t.Errorf("primary %+v", w)
		}
	})
	// The API's spellings (threadId, BLOCKED) as well as the snake_case
	// ones read before (issue 12).
	for _, tt := range []struct {
		name    string
		content map[string]any
	}{
		{"working state in the API's spelling", map[string]any{"threadId": "t-1", "state": "BLOCKED", "nextActions": []any{"ask"},
			"openQuestions": []any{"why"}, "contextSummary": "ctx",
			"activeConstraints": []any{map[string]any{"type": "budget", "key": "usd", "value": 5, "required": true}}}},
		{"working state in snake_case", map[string]any{"thread_id": "t-1", "state": "blocked", "next_actions": []any{"ask"},
			"open_questions": []any{"why"}, "context_summary": "ctx",
			"active_constraints": []any{map[string]any{"type": "budget", "key": "usd", "value": 5, "required": true}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := capture(t, membrane.CaptureInput{Source: "s", SourceKind: kind("working_state"), Content: tt.content})
			w := c.Primary.Payload.(*membrane.WorkingPayload)
			if w.ThreadID != "t-1" || w.State != membrane.TaskBlocked || len(w.NextActions) != 1 || len(w.OpenQuestions) != 1 ||
				w.ContextSummary != "ctx" || len(w.ActiveConstraints) != 1 {
				t.Errorf("primary %+v", w)
			}
		})
	}
	t.Run("tool output in the API's spelling", func(t *testing.T) {
		c := capture(t, membrane.CaptureInput{Source: "s", SourceKind: kind("tool_output"), Content: map[string]any{"toolName": "bash", "dependsOn": []any{"0"}}})
		ep := c.Primary.Payload.(*membrane.EpisodicPayload)
		if len(ep.ToolGraph) != 1 || ep.ToolGraph[0].Tool != "bash" || len(ep.ToolGraph[0].DependsOn) != 1 {
			t.Errorf("tool graph %+v", ep.ToolGraph)
		}
	})
	t.Run("event: summary, then reason, then content", func(t *testing.T) {
		for _, tt := range []struct {
			summary, reason *string
			content         any
			want            string
		}{
			{&summary, &reason, "x", summary},
			{nil, &reason, "x", reason},
			{nil, nil, "  plain text ", "plain text"},
			{nil, nil, map[string]any{"message": "hello", "ref": "msg-1"}, "hello"},
			{nil, nil, map[string]any{"a": 1}, `{"a":1}`},
			{nil, nil, strings.Repeat("é", 1500), strings.Repeat("é", 1000) + "…"},
		} {
			c := capture(t, membrane.CaptureInput{Source: "s", Summary: tt.summary, ReasonToRemember: tt.reason, Content: tt.content})
			ep := c.Primary.Payload.(*membrane.EpisodicPayload)
			if ep.Timeline[0].Summary != tt.want || ep.Timeline[0].EventKind != "event" || c.Primary.Confidence != 0.8 {
				t.Errorf("summary = %q, want %q", ep.Timeline[0].Summary, tt.want)
			}
		}
		c := capture(t, membrane.CaptureInput{Source: "s", SourceKind: kind("agent_turn"), Content: map[string]any{"id": "turn-7"}})
		if ep := c.Primary.Payload.(*membrane.EpisodicPayload); ep.Timeline[0].Ref != "turn-7" || ep.Timeline[0].EventKind != "agent_turn" || c.Primary.Confidence != 0.5 {
			t.Errorf("agent turn %+v", ep.Timeline[0])
		}
	})
}

func TestCaptureBadInput(t *testing.T) {
	kind := func(s string) *string { return &s }
	bogus := membrane.Sensitivity("secret")
	many := map[string]any{}
	list := []any{}
	for i := range membrane.MaxMentions + 1 {
		list = append(list, fmt.Sprint("e", i))
	}
	many["entities"] = list
	tests := []struct {
		name  string
		in    membrane.CaptureInput
		field string
	}{
		{"no source", membrane.CaptureInput{}, "source"},
		{"working state without thread", membrane.CaptureInput{Source: "s", SourceKind: kind("working_state"), Content: map[string]any{"state": "done"}}, "content.threadId"},
		{"working state with a bad state", membrane.CaptureInput{Source: "s", SourceKind: kind("working_state"), Content: map[string]any{"thread_id": "t", "state": "dreaming"}}, "content.state"},
		{"tool output without tool", membrane.CaptureInput{Source: "s", SourceKind: kind("tool_output"), Content: map[string]any{}}, "content.tool_name"},
		{"too many mentions", membrane.CaptureInput{Source: "s", Content: many}, "content"},
		{"entity name too long", membrane.CaptureInput{Source: "s", Content: map[string]any{"tool": strings.Repeat("x", membrane.MaxTermBytes+1)}}, "content.tool"},
		{"sensitivity", membrane.CaptureInput{Source: "s", Sensitivity: &bogus}, "sensitivity"},
		{"empty tag", membrane.CaptureInput{Source: "s", Tags: []string{""}}, "tags[0]"},
		{"long source kind", membrane.CaptureInput{Source: "s", SourceKind: kind(strings.Repeat("k", 257))}, "sourceKind"},
	}
	for _, tt := range tests {
		_, err := membrane.DefaultPolicy().BuildCapture(tt.in, captureNow)
		if membrane.ErrorCode(err) != membrane.EINVALID || len(membrane.ErrorFields(err)) == 0 || membrane.ErrorFields(err)[0].Field != tt.field {
			t.Errorf("%s: err = %v, fields %+v; want BAD_USER_INPUT on %s", tt.name, err, membrane.ErrorFields(err), tt.field)
		}
	}
}

func TestEntityTerms(t *testing.T) {
	p := &membrane.EntityPayload{CanonicalName: "  PostgreSQL  DB ", Aliases: []membrane.EntityAlias{{Value: "postgresql db"}, {Value: "PG"}, {Value: " "}, {Value: strings.Repeat("x", membrane.MaxTermBytes+1)}}}
	if got := membrane.EntityTerms(p); !reflect.DeepEqual(got, []string{"postgresql db", "pg"}) {
		t.Errorf("terms = %q", got)
	}
	if got := membrane.BrowserFields(p)["terms"]; !reflect.DeepEqual(got, []string{"postgresql db", "pg"}) {
		t.Errorf("browser terms = %v", got)
	}
}
