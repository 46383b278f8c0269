package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

const captureQ = `mutation($in: CaptureMemoryInput!, $k: String) { captureMemory(input: $in, idempotencyKey: $k) {
  primary { id type scope sensitivity confidence lifecycle { halfLifeSeconds } payload { __typename ... on EpisodicPayload { timeline { eventKind ref summary } } } }
  created { id type scope sensitivity lifecycle { halfLifeSeconds deletionPolicy }
    payload { __typename ... on EntityPayload { canonicalName primaryType aliases { value } } ... on SemanticPayload { subject predicate object evidence { sourceId } } } }
  edges { predicate sourceId targetId weight actor } } }`

type capturedRec struct {
	ID, Type, Scope, Sensitivity string
	Confidence                   float64
	Lifecycle                    struct {
		HalfLifeSeconds int
		DeletionPolicy  string
	}
	Payload struct {
		Typename      string `json:"__typename"`
		CanonicalName string
		PrimaryType   string
		Aliases       []struct{ Value string }
		Subject       string
		Predicate     string
		Object        any
		Evidence      []struct{ SourceID string }
		Timeline      []struct{ EventKind, Ref, Summary string }
	}
}

type captureOut struct {
	CaptureMemory struct {
		Primary capturedRec
		Created []capturedRec
		Edges   []struct {
			Predicate, SourceID, TargetID, Actor string
			Weight                               float64
		}
	}
}

func (c *client) capture(in map[string]any) captureOut {
	c.T.Helper()
	var out captureOut
	c.Do(captureQ, map[string]any{"in": in}, &out)
	return out
}

// edgesOf renders a capture's edges with ids replaced by names.
func edgesOf(out captureOut, names map[string]string) []string {
	var s []string
	for _, e := range out.CaptureMemory.Edges {
		s = append(s, fmt.Sprintf("%s %s>%s", e.Predicate, names[e.SourceID], names[e.TargetID]))
	}
	sort.Strings(s)
	return s
}

func TestCaptureMemory(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	subject := "auth-service-" + word()
	out := c.capture(map[string]any{"source": "agent-1", "sourceKind": "observation", "scope": scope, "tags": []any{"infra"},
		"content": map[string]any{"subject": subject, "predicate": "uses_database", "object": "PostgreSQL"}})
	cm := out.CaptureMemory
	p := cm.Primary
	if p.Type != "EPISODIC" || p.Scope != scope || p.Sensitivity != "LOW" || p.Confidence != 0.7 || p.Lifecycle.HalfLifeSeconds != 3600 ||
		p.Payload.Timeline[0].EventKind != "observation" {
		t.Fatalf("primary %+v", p)
	}
	if len(cm.Created) != 2 {
		t.Fatalf("created %+v", cm.Created)
	}
	ent, f := cm.Created[0], cm.Created[1]
	if ent.Type != "ENTITY" || ent.Payload.CanonicalName != subject || ent.Payload.PrimaryType != "Concept" || ent.Scope != scope ||
		ent.Lifecycle.HalfLifeSeconds != 2592000 || ent.Lifecycle.DeletionPolicy != "MANUAL_ONLY" {
		t.Errorf("entity %+v", ent)
	}
	if f.Type != "SEMANTIC" || f.Payload.Subject != subject || f.Payload.Predicate != "uses_database" || f.Payload.Object != "PostgreSQL" ||
		f.Payload.Evidence[0].SourceID != p.ID || f.Lifecycle.HalfLifeSeconds != 2592000 {
		t.Errorf("fact %+v", f)
	}
	names := map[string]string{p.ID: "primary", ent.ID: "entity", f.ID: "fact"}
	want := []string{"ABOUT fact>entity", "DERIVED_FROM fact>primary", "MENTIONS primary>entity"}
	if got := edgesOf(out, names); !slices.Equal(got, want) {
		t.Errorf("edges %v", got)
	}
	for _, e := range cm.Edges {
		if e.Actor != c.Actor || e.Weight != 1 {
			t.Errorf("edge %+v", e)
		}
	}
	// Every created record has its create audit entry, by the principal
	// with the source as detail; the graph holds the edges.
	var audit struct {
		Record struct {
			AuditLog struct {
				Nodes []struct{ Action, Actor, ActorDetail string }
			}
			Relations struct {
				Edges []struct {
					Direction string
					Relation  struct{ Predicate string }
				}
			}
		}
	}
	for _, id := range []string{p.ID, ent.ID, f.ID} {
		c.Do(`query($id: ID!) { record(id: $id) { auditLog { nodes { action actor actorDetail } } relations { edges { direction relation { predicate } } } } }`, map[string]any{"id": id}, &audit)
		a := audit.Record.AuditLog.Nodes
		if len(a) != 1 || a[0].Action != "CREATE" || a[0].Actor != c.Actor || a[0].ActorDetail != "agent-1" {
			t.Errorf("audit of %s: %+v", names[id], a)
		}
	}
	if rels := audit.Record.Relations.Edges; len(rels) != 2 { // the fact: DERIVED_FROM and ABOUT
		t.Errorf("fact relations %+v", rels)
	}

	t.Run("a second capture reuses the entity", func(t *testing.T) {
		again := c.capture(map[string]any{"source": "agent-2", "sourceKind": "observation", "scope": scope,
			"content": map[string]any{"subject": " " + subject + " ", "predicate": "runs_on", "object": "k8s"}})
		if len(again.CaptureMemory.Created) != 1 || again.CaptureMemory.Created[0].Type != "SEMANTIC" {
			t.Fatalf("created %+v", again.CaptureMemory.Created)
		}
		hits := 0
		for _, e := range again.CaptureMemory.Edges {
			if e.TargetID == ent.ID {
				hits++
			}
		}
		if hits != 2 { // MENTIONS from the capture, ABOUT from the fact
			t.Errorf("edges to the existing entity: %d (%+v)", hits, again.CaptureMemory.Edges)
		}
	})
	t.Run("by alias", func(t *testing.T) {
		name := "PostgreSQL-" + word()
		first := c.capture(map[string]any{"source": "s", "scope": scope,
			"content": map[string]any{"entities": []any{map[string]any{"name": name, "type": "Database", "aliases": []any{"pg-" + name}}}}})
		if len(first.CaptureMemory.Created) != 1 || first.CaptureMemory.Created[0].Payload.PrimaryType != "Database" {
			t.Fatalf("created %+v", first.CaptureMemory.Created)
		}
		second := c.capture(map[string]any{"source": "s", "scope": scope, "content": map[string]any{"tool": "PG-" + name}})
		if len(second.CaptureMemory.Created) != 0 || len(second.CaptureMemory.Edges) != 1 || second.CaptureMemory.Edges[0].TargetID != first.CaptureMemory.Created[0].ID {
			t.Errorf("second capture %+v", second.CaptureMemory)
		}
	})
	t.Run("found by retrieve", func(t *testing.T) {
		awaitSearch(t, c)
		got := c.retrieve(map[string]any{"query": subject, "scopes": []any{scope}})
		ids := hitIDs(got.Retrieve.Hits)
		if !slices.Contains(ids, ent.ID) || !slices.Contains(ids, f.ID) {
			t.Errorf("hits %v", ids)
		}
	})
}

// TestCaptureScopeIsolation: entities are resolved within the capture's
// scope only; the same name in another scope (or unscoped) is another
// entity, and no edge crosses scopes.
func TestCaptureScopeIsolation(t *testing.T) {
	alpha, beta := neo4jtest.Scope(t), neo4jtest.Scope(t)
	c := newClient(t)
	name := "shared-name-" + word()
	entityOf := func(scope any) (string, string) {
		in := map[string]any{"source": "s", "content": map[string]any{"project": name}}
		if scope != nil {
			in["scope"] = scope
		}
		out := c.capture(in)
		cm := out.CaptureMemory
		if len(cm.Edges) != 1 {
			t.Fatalf("edges %+v", cm.Edges)
		}
		return cm.Edges[0].TargetID, cm.Primary.ID
	}
	a1, _ := entityOf(alpha)
	b1, bPrimary := entityOf(beta)
	u1, _ := entityOf(nil)
	a2, _ := entityOf(alpha)
	u2, _ := entityOf("")
	if a1 == b1 || a1 == u1 || b1 == u1 {
		t.Fatalf("entities shared across scopes: alpha %s beta %s unscoped %s", a1, b1, u1)
	}
	if a2 != a1 || u2 != u1 {
		t.Errorf("not reused within the scope: alpha %s/%s unscoped %s/%s", a1, a2, u1, u2)
	}
	var rec struct {
		Record struct {
			Scope     string
			Relations struct {
				Edges []struct{ Node struct{ Scope string } }
			}
		}
	}
	c.Do(`query($id: ID!) { record(id: $id) { scope relations { edges { node { scope } } } } }`, map[string]any{"id": b1}, &rec)
	if rec.Record.Scope != beta || len(rec.Record.Relations.Edges) != 1 || rec.Record.Relations.Edges[0].Node.Scope != beta {
		t.Errorf("beta entity %+v (primary %s)", rec.Record, bPrimary)
	}
}

// TestCaptureTrust: writes need a writer within its ceiling and scopes;
// entities the writer cannot see in full are never linked to.
func TestCaptureTrust(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	rd := reader("reader", membrane.SensitivityHyper, scope)
	wr := writer("writer", membrane.SensitivityLow, scope)
	c := newClient(t, rd, wr)
	in := func(extra map[string]any) map[string]any {
		m := map[string]any{"source": "s", "scope": scope, "content": map[string]any{"project": "p-" + word()}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c.as(rd.Actor).Fail("FORBIDDEN", captureQ, map[string]any{"in": in(nil)})
	c.as(wr.Actor).Fail("FORBIDDEN", captureQ, map[string]any{"in": in(map[string]any{"scope": other})})
	c.as(wr.Actor).Fail("FORBIDDEN", captureQ, map[string]any{"in": in(map[string]any{"sensitivity": "MEDIUM"})})
	if n := c.Count(scope) + c.Count(other); n != 0 {
		t.Fatalf("a refused capture wrote %d records", n)
	}
	// A high entity the writer cannot see: the writer's capture makes its own.
	secret := "secret-" + word()
	hi := c.capture(map[string]any{"source": "admin", "scope": scope, "sensitivity": "HIGH", "content": map[string]any{"person": secret}})
	hiEntity := hi.CaptureMemory.Created[0].ID
	lo := c.as(wr.Actor).capture(map[string]any{"source": "w", "scope": scope, "content": map[string]any{"person": secret}})
	if len(lo.CaptureMemory.Created) != 1 || lo.CaptureMemory.Created[0].ID == hiEntity || lo.CaptureMemory.Created[0].Sensitivity != "LOW" {
		t.Fatalf("writer's capture %+v", lo.CaptureMemory)
	}
	// The admin sees both: the high entity, encrypted at rest, is found by
	// the keyed digests of its names (never plaintext terms), and as the
	// older of the two it is the one the name resolves to.
	again := c.capture(map[string]any{"source": "admin", "scope": scope, "content": map[string]any{"person": secret}})
	if len(again.CaptureMemory.Created) != 0 || again.CaptureMemory.Edges[0].TargetID != hiEntity {
		t.Errorf("admin capture %+v", again.CaptureMemory)
	}
}

func TestCaptureBadInput(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	for _, tt := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"source": ""}, "input.source"},
		{map[string]any{"source": "s", "sourceKind": "working_state", "content": map[string]any{"state": "DONE"}}, "input.content.threadId"},
		{map[string]any{"source": "s", "sourceKind": "working_state", "content": map[string]any{"thread_id": "t", "state": "napping"}}, "input.content.state"},
		{map[string]any{"source": "s", "sourceKind": "tool_output", "content": map[string]any{"args": map[string]any{}}}, "input.content.tool_name"},
		{map[string]any{"source": "s", "tags": []any{""}}, "input.tags[0]"},
	} {
		tt.in["scope"] = scope
		errs := c.Fail("BAD_USER_INPUT", captureQ, map[string]any{"in": tt.in})
		if f := fieldsOf(errs); len(f) == 0 || f[0] != tt.field {
			t.Errorf("%v: fields %v, want %s", tt.in, f, tt.field)
		}
	}
	c.Fail("GRAPHQL_VALIDATION_FAILED", `mutation { captureMemory(input: {content: "x"}) { primary { id } } }`, nil)
	if n := c.Count(scope); n != 0 {
		t.Fatalf("bad input wrote %d records", n)
	}
}

// TestCaptureConcurrentEntityCreation: captures racing to create the same
// new entity in one scope end up with one entity.
func TestCaptureConcurrentEntityCreation(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	name := "racy-" + word()
	const n = 8
	targets := make([]string, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out captureOut
			errs[i] = (&benchClient{url: c.URL, key: c.Key}).post(mustJSON(captureQ, map[string]any{"in": map[string]any{"source": fmt.Sprint("agent-", i), "scope": scope,
				"content": map[string]any{"service": name}}}), &out)
			if errs[i] == nil && len(out.CaptureMemory.Edges) == 1 {
				targets[i] = out.CaptureMemory.Edges[0].TargetID
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil || targets[i] == "" {
			t.Fatalf("capture %d: %v", i, err)
		}
		if targets[i] != targets[0] {
			t.Fatalf("captures linked to different entities: %v", targets)
		}
	}
	var got struct {
		Records struct{ TotalCount int }
	}
	c.Do(`query($s: [String!]) { records(filter: {scopes: $s, types: [ENTITY]}) { totalCount } }`, map[string]any{"s": []any{scope}}, &got)
	if got.Records.TotalCount != 1 {
		t.Fatalf("%d entities", got.Records.TotalCount)
	}
}

func TestCaptureIdempotency(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	in := map[string]any{"source": "s", "scope": scope, "content": map[string]any{"subject": "idem-" + word(), "predicate": "p", "object": "o"}}
	var first, second captureOut
	c.Do(captureQ, map[string]any{"in": in, "k": "cap-1"}, &first)
	c.Do(captureQ, map[string]any{"in": in, "k": "cap-1"}, &second)
	f, s := first.CaptureMemory, second.CaptureMemory
	if f.Primary.ID != s.Primary.ID || len(s.Created) != 2 || s.Created[0].ID != f.Created[0].ID || s.Created[1].ID != f.Created[1].ID {
		t.Fatalf("replay %+v\nfirst %+v", s, f)
	}
	names := map[string]string{f.Primary.ID: "primary", f.Created[0].ID: "entity", f.Created[1].ID: "fact"}
	if a, b := edgesOf(first, names), edgesOf(second, names); !slices.Equal(a, b) || len(a) != 3 {
		t.Errorf("edges %v, replayed %v", a, b)
	}
	if n := c.Count(scope); n != 3 {
		t.Errorf("%d records", n)
	}
	in["summary"] = "different"
	c.Fail("CONFLICT", captureQ, map[string]any{"in": in, "k": "cap-1"})
}

// mustJSON marshals a GraphQL request.
func mustJSON(query string, vars map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		panic(err)
	}
	return b
}
