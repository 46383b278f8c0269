package graph_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

const ts = "2026-01-02T03:04:05Z"

// fullPayloads has, for each type, a payload input with every field set.
// The API must return it unchanged, field by field.
var fullPayloads = map[string]struct {
	key, typename string
	payload       map[string]any
}{
	"EPISODIC": {"episodic", "EpisodicPayload", map[string]any{
		"timeline":  []any{map[string]any{"t": ts, "eventKind": "user_input", "ref": "msg-1", "summary": "asked for a deploy"}},
		"toolGraph": []any{map[string]any{"id": "n1", "tool": "bash", "args": map[string]any{"cmd": "make deploy", "n": 3.0}, "result": map[string]any{"exit": 0.0}, "timestamp": ts, "dependsOn": []any{}}, map[string]any{"id": "n2", "tool": "curl", "args": map[string]any{}, "result": "ok", "timestamp": ts, "dependsOn": []any{"n1"}}},
		"environment": map[string]any{"os": "linux", "osVersion": "6.1", "toolVersions": map[string]any{"go": "1.26"},
			"workingDirectory": "/src", "context": map[string]any{"branch": "main", "nested": map[string]any{"deep": []any{1.0, "two", true, nil}}}},
		"outcome": "SUCCESS", "artifacts": []any{"build.log"}, "toolGraphRef": "graph-9",
	}},
	"WORKING": {"working", "WorkingPayload", map[string]any{
		"threadId": "thread-1", "state": "BLOCKED", "nextActions": []any{"ask user"}, "openQuestions": []any{"which region?"},
		"contextSummary":    "waiting for region",
		"activeConstraints": []any{map[string]any{"type": "budget", "key": "usd", "value": 10.0, "required": true}},
	}},
	"SEMANTIC": {"semantic", "SemanticPayload", map[string]any{
		"subject": "auth-service", "predicate": "uses_database", "object": map[string]any{"name": "PostgreSQL", "version": 16.0},
		"revisionPolicy": "replace",
		"validity":       map[string]any{"mode": "TIMEBOXED", "conditions": map[string]any{"env": "prod"}, "start": ts, "end": "2027-01-02T03:04:05Z"},
		"evidence":       []any{map[string]any{"sourceType": "episodic", "sourceId": "ep-1", "timestamp": ts}},
	}},
	"COMPETENCE": {"competence", "CompetencePayload", map[string]any{
		"skillName": "deploy", "requiredTools": []any{"bash"}, "failureModes": []any{"timeout"}, "fallbacks": []any{"rollback"}, "version": "2",
		"triggers":    []any{map[string]any{"signal": "deploy requested", "conditions": map[string]any{"env": "prod"}}},
		"recipe":      []any{map[string]any{"step": "build", "tool": "bash", "argsSchema": map[string]any{"type": "object"}, "validation": "exit 0"}},
		"performance": map[string]any{"successCount": 3.0, "failureCount": 1.0, "successRate": 0.75, "avgLatencyMs": 120.5, "lastUsedAt": ts},
	}},
	"PLAN_GRAPH": {"planGraph", "PlanGraphPayload", map[string]any{
		"planId": "plan-1", "version": "1", "intent": "ship a release",
		"constraints": map[string]any{"maxMinutes": 30.0}, "inputsSchema": map[string]any{"type": "object"}, "outputsSchema": map[string]any{"type": "string"},
		"nodes":   []any{map[string]any{"id": "a", "op": "build", "params": map[string]any{"target": "all"}, "guards": map[string]any{"branch": "main"}}, map[string]any{"id": "b", "op": "test", "params": map[string]any{}, "guards": map[string]any{}}},
		"edges":   []any{map[string]any{"from": "a", "to": "b", "kind": "CONTROL"}},
		"metrics": map[string]any{"avgLatencyMs": 900.0, "failureRate": 0.1, "executionCount": 10.0, "lastExecutedAt": ts},
	}},
	"ENTITY": {"entity", "EntityPayload", map[string]any{
		"canonicalName": "Ada Lovelace", "primaryType": "Person", "types": []any{"Person", "Author"}, "summary": "mathematician",
		"aliases":     []any{map[string]any{"value": "Ada", "kind": "short", "locale": "en"}},
		"identifiers": []any{map[string]any{"namespace": "wikidata", "value": "Q7259"}},
	}},
}

func TestRecordRoundTripEveryType(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	for typ, tc := range fullPayloads {
		t.Run(typ, func(t *testing.T) {
			input := map[string]any{
				"type": typ, "sensitivity": "MEDIUM", "confidence": 0.6, "salience": 2.5, "scope": scope,
				"tags": []any{"alpha", "beta"},
				"lifecycle": map[string]any{"curve": "EXPONENTIAL", "halfLifeSeconds": 7200.0, "minSalience": 0.05, "maxAgeSeconds": 864000.0,
					"reinforcementGain": 0.2, "pinned": true, "deletionPolicy": "MANUAL_ONLY"},
				"provenance": map[string]any{"createdBy": "tester", "sources": []any{
					map[string]any{"kind": "ARTIFACT", "ref": "file://notes.md", "hash": "sha256:ab", "createdBy": "agent-1", "timestamp": ts}}},
				"payload": map[string]any{tc.key: tc.payload},
			}
			var created struct{ CreateRecord map[string]any }
			c.Do(`mutation($in: RecordInput!) { createRecord(input: $in, actor: "tester") { ...R } }`+recordFields, map[string]any{"in": input}, &created)
			var read struct{ Record map[string]any }
			c.Do(`query($id: ID!) { record(id: $id) { ...R } }`+recordFields, map[string]any{"id": created.CreateRecord["id"]}, &read)
			got := read.Record
			if !reflect.DeepEqual(created.CreateRecord, got) {
				t.Fatalf("read differs from create response:\ncreate %v\nread   %v", created.CreateRecord, got)
			}
			for _, f := range []string{"type", "sensitivity", "confidence", "salience", "scope", "tags"} {
				if !reflect.DeepEqual(got[f], input[f]) {
					t.Errorf("%s = %v, want %v", f, got[f], input[f])
				}
			}
			if got["status"] != "ACTIVE" || got["version"] != 1.0 {
				t.Errorf("status %v version %v", got["status"], got["version"])
			}
			lc := got["lifecycle"].(map[string]any)
			if lc["lastReinforcedAt"] != got["createdAt"] {
				t.Errorf("lastReinforcedAt %v, want createdAt %v", lc["lastReinforcedAt"], got["createdAt"])
			}
			delete(lc, "lastReinforcedAt")
			if !reflect.DeepEqual(lc, input["lifecycle"]) {
				t.Errorf("lifecycle = %v, want %v", lc, input["lifecycle"])
			}
			if !reflect.DeepEqual(got["provenance"], input["provenance"]) {
				t.Errorf("provenance = %v, want %v", got["provenance"], input["provenance"])
			}
			payload := got["payload"].(map[string]any)
			if payload["__typename"] != tc.typename {
				t.Errorf("__typename = %v", payload["__typename"])
			}
			delete(payload, "__typename")
			if !reflect.DeepEqual(payload, tc.payload) {
				a, _ := json.Marshal(payload)
				b, _ := json.Marshal(tc.payload)
				t.Errorf("payload differs:\ngot  %s\nwant %s", a, b)
			}
		})
	}
}

func TestIngestMutations(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	vars := map[string]any{"scope": scope}
	var ev struct{ IngestEvent map[string]any }
	c.Do(`mutation($scope: String) { ingestEvent(input: {source: "agent-1", eventKind: "user_input", ref: "msg-7", summary: "deploy please",
	  timestamp: "2026-01-02T03:04:05Z", tags: ["chat"], scope: $scope}) { ...R auditLog { nodes { action actor actorDetail rationale previous } } } }`+recordFields, vars, &ev)
	r := ev.IngestEvent
	if r["type"] != "EPISODIC" || r["confidence"] != 0.8 || r["sensitivity"] != "LOW" {
		t.Fatalf("event record = %v", r)
	}
	if hl := r["lifecycle"].(map[string]any)["halfLifeSeconds"]; hl != 3600.0 {
		t.Fatalf("episodic half-life = %v", hl)
	}
	audit := r["auditLog"].(map[string]any)["nodes"].([]any)
	if a := audit[0].(map[string]any); len(audit) != 1 || a["action"] != "CREATE" || a["actor"] != c.Actor || a["actorDetail"] != "agent-1" {
		t.Fatalf("audit = %v", audit)
	}

	var tool struct{ IngestToolOutput map[string]any }
	c.Do(`mutation($scope: String) { ingestToolOutput(input: {source: "agent-1", toolName: "bash", args: {cmd: "ls"}, result: "a b", scope: $scope}) { ...R } }`+recordFields, vars, &tool)
	if tool.IngestToolOutput["confidence"] != 0.9 {
		t.Fatalf("tool output = %v", tool.IngestToolOutput)
	}

	var obs struct{ IngestObservation map[string]any }
	c.Do(`mutation($scope: String) { ingestObservation(input: {source: "agent-1", subject: "svc", predicate: "uses", object: "pg", scope: $scope, sensitivity: HIGH}) { ...R } }`+recordFields, vars, &obs)
	if obs.IngestObservation["type"] != "SEMANTIC" || obs.IngestObservation["confidence"] != 0.7 || obs.IngestObservation["sensitivity"] != "HIGH" {
		t.Fatalf("observation = %v", obs.IngestObservation)
	}

	var ws struct{ IngestWorkingState map[string]any }
	c.Do(`mutation($scope: String) { ingestWorkingState(input: {source: "agent-1", threadId: "t1", state: EXECUTING, nextActions: ["x"], scope: $scope}) { ...R } }`+recordFields, vars, &ws)
	if ws.IngestWorkingState["type"] != "WORKING" || ws.IngestWorkingState["confidence"] != 1.0 {
		t.Fatalf("working = %v", ws.IngestWorkingState)
	}

	t.Run("outcome", func(t *testing.T) {
		var out struct{ IngestOutcome map[string]any }
		c.Do(`mutation($id: ID!) { ingestOutcome(input: {source: "judge", targetRecordId: $id, outcomeStatus: SUCCESS}) {
		  ...R auditLog { nodes { action actor actorDetail rationale previous } } } }`+recordFields, map[string]any{"id": r["id"]}, &out)
		got := out.IngestOutcome
		if got["payload"].(map[string]any)["outcome"] != "SUCCESS" || got["version"] != 2.0 {
			t.Fatalf("after outcome = %v", got)
		}
		audit := got["auditLog"].(map[string]any)["nodes"].([]any)
		if len(audit) != 2 {
			t.Fatalf("audit = %v", audit)
		}
		last := audit[1].(map[string]any)
		if last["action"] != "OUTCOME" || last["actor"] != c.Actor || last["actorDetail"] != "judge" || !reflect.DeepEqual(last["previous"], map[string]any{"outcome": nil}) {
			t.Fatalf("outcome audit = %v", last)
		}
		c.Fail("FAILED_PRECONDITION", `mutation($id: ID!) { ingestOutcome(input: {source: "judge", targetRecordId: $id, outcomeStatus: FAILURE}) { id } }`,
			map[string]any{"id": obs.IngestObservation["id"]})
		c.Fail("NOT_FOUND", `mutation { ingestOutcome(input: {source: "judge", targetRecordId: "nope", outcomeStatus: FAILURE}) { id } }`, nil)
	})
	if n := c.Count(scope); n != 4 {
		t.Fatalf("records in scope = %d, want 4", n)
	}
}

func TestIngestBatch(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	batch := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"type": "SEMANTIC", "scope": scope, "tags": []any{"batch"},
				"payload": map[string]any{"semantic": map[string]any{"subject": fmt.Sprintf("s%d", i), "predicate": "p", "object": i}}}
		}
		return out
	}
	var got struct{ IngestBatch []struct{ ID string } }
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": batch(250)}, &got)
	if len(got.IngestBatch) != 250 || c.Count(scope) != 250 {
		t.Fatalf("created %d, stored %d", len(got.IngestBatch), c.Count(scope))
	}

	t.Run("one invalid record writes nothing", func(t *testing.T) {
		s2 := neo4jtest.Scope(t)
		in := batch(5)
		for _, r := range in {
			r.(map[string]any)["scope"] = s2
		}
		in[3].(map[string]any)["confidence"] = 7.0
		errs := c.Fail("BAD_USER_INPUT", `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": in})
		fields := errs[0].Extensions["fields"].([]any)
		if f := fields[0].(map[string]any)["field"]; f != "inputs[3].confidence" {
			t.Fatalf("field = %v", f)
		}
		if n := c.Count(s2); n != 0 {
			t.Fatalf("stored %d records after a failed batch", n)
		}
	})
	t.Run("an existing id fails the whole batch", func(t *testing.T) {
		s3 := neo4jtest.Scope(t)
		in := batch(3)
		for _, r := range in {
			r.(map[string]any)["scope"] = s3
		}
		in[2].(map[string]any)["id"] = got.IngestBatch[0].ID
		c.Fail("CONFLICT", `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": in})
		if n := c.Count(s3); n != 0 {
			t.Fatalf("stored %d records after a conflicting batch", n)
		}
	})
	t.Run("too many records", func(t *testing.T) {
		c.Fail("BAD_USER_INPUT", `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": batch(membrane.MaxBatch + 1)})
	})
}

func TestBadInputIsCodedAndWritesNothing(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	big := strings.Repeat("x", membrane.MaxStringBytes+1)
	tags := make([]any, 101)
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	create := `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`
	sem := func(edit func(map[string]any)) map[string]any {
		in := map[string]any{"type": "SEMANTIC", "scope": scope, "payload": map[string]any{"semantic": map[string]any{"subject": "s", "predicate": "p"}}}
		edit(in)
		return map[string]any{"in": in}
	}
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		code  string
	}{
		{"string over 100 KB", create, sem(func(in map[string]any) { in["payload"].(map[string]any)["semantic"].(map[string]any)["subject"] = big }), "BAD_USER_INPUT"},
		{"over 100 tags", create, sem(func(in map[string]any) { in["tags"] = tags }), "BAD_USER_INPUT"},
		{"tag over 256 bytes", create, sem(func(in map[string]any) { in["tags"] = []any{strings.Repeat("t", 257)} }), "BAD_USER_INPUT"},
		{"payload over 10 MiB", create, sem(func(in map[string]any) {
			chunks := make([]any, 110)
			for i := range chunks {
				chunks[i] = strings.Repeat("y", 99_000)
			}
			in["payload"].(map[string]any)["semantic"].(map[string]any)["object"] = chunks
		}), "BAD_USER_INPUT"},
		{"wrong payload for type", create, sem(func(in map[string]any) { in["type"] = "ENTITY" }), "BAD_USER_INPUT"},
		{"unknown enum", create, sem(func(in map[string]any) { in["sensitivity"] = "SECRET" }), "BAD_USER_INPUT"},
		{"wrong variable type", create, sem(func(in map[string]any) { in["confidence"] = "high" }), "BAD_USER_INPUT"},
		// JSON cannot carry NaN or infinity; a number past float64 is the
		// nearest a client gets.
		{"salience past float64", create, sem(func(in map[string]any) { in["salience"] = json.Number("1e400") }), "BAD_USER_INPUT"},
		{"syntax error", `mutation { createRecord(`, nil, "GRAPHQL_PARSE_FAILED"},
		{"unknown field", `{ record(id: "x") { nope } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"missing record", `{ record(id: "does-not-exist") { id } }`, nil, "NOT_FOUND"},
		{"page too large", `{ records(first: 501) { nodes { id } } }`, nil, "BAD_USER_INPUT"},
		{"bad cursor", `{ records(after: "garbage!") { nodes { id } } }`, nil, "BAD_USER_INPUT"},
		{"inverted salience range", `{ records(filter: {minSalience: 2, maxSalience: 1}) { nodes { id } } }`, nil, "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := c.Fail(tt.code, tt.query, tt.vars)
			for _, e := range errs {
				lower := strings.ToLower(e.Message)
				for _, leak := range []string{"cypher", "neo4j", "match (", "goroutine", ".go:"} {
					if strings.Contains(lower, leak) {
						t.Fatalf("error leaks %q: %s", leak, e.Message)
					}
				}
			}
		})
	}
	if n := c.Count(scope); n != 0 {
		t.Fatalf("bad input wrote %d records", n)
	}
}

// TestChosenIDsAreIdempotent: a create whose record id the client chose is
// idempotent without a key, so that a retry after OUTCOME_UNKNOWN is
// safe: the same request of the same principal answers with the record it
// created (not a second one, not a CONFLICT), on every path that takes a
// chosen id. Another request with that id is the CONFLICT of a taken id,
// as is the same request of another principal or after the record was
// deleted, with the same message as ever (no oracle).
func TestChosenIDsAreIdempotent(t *testing.T) {
	writer := membrane.Principal{Actor: "other-writer-" + membrane.NewID(), Role: membrane.RoleWriter,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}}
	db := neo4jtest.DB(t)
	root := newClientWith(t, func(w *gqltest.Wiring) { w.Stores.Deletes = db }, writer)
	// in returns the client failing sub-test t, not the parent.
	in := func(t *testing.T) *client { d := *root; d.T = t; return &d }
	const taken = membrane.IDTaken
	create := `mutation($in: RecordInput!) { createRecord(input: $in, actor: "agent-1") { id createdAt version } }`
	batch := `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in, actor: "agent-1") { id createdAt version } }`
	fork := `mutation($old: ID!, $in: RecordInput!) { fork(sourceId: $old, newRecord: $in, actor: "agent-1") { id createdAt version } }`
	supersede := `mutation($old: ID!, $in: RecordInput!) { supersede(oldId: $old, newRecord: $in, actor: "agent-1") { id createdAt version } }`
	merge := `mutation($ids: [ID!]!, $in: RecordInput!) { merge(ids: $ids, mergedRecord: $in, actor: "agent-1") { id createdAt version } }`
	withID := func(in map[string]any, id string) map[string]any { in["id"] = id; return in }
	// vars returns a request's variables creating id with subject, from
	// records the path needs (created once per case, in scope).
	tests := []struct {
		name  string
		query string
		vars  func(scope, id, subject string) map[string]any
	}{
		{"createRecord", create, func(scope, id, subject string) map[string]any {
			return map[string]any{"in": withID(factInput(scope, subject), id)}
		}},
		{"ingestBatch", batch, func(scope, id, subject string) map[string]any {
			return map[string]any{"in": []any{factInput(scope, "server-chosen"), withID(factInput(scope, subject), id)}}
		}},
		{"supersede", supersede, nil},
		{"fork", fork, nil},
		{"merge", merge, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := in(t)
			scope := neo4jtest.Scope(t)
			vars := tt.vars
			if vars == nil {
				old := c.Create(scope, "SEMANTIC", gqltest.Fact("old"), nil)
				other := c.Create(scope, "SEMANTIC", gqltest.Fact("other"), nil)
				vars = func(_, id, subject string) map[string]any {
					if tt.name == "merge" {
						return map[string]any{"ids": []any{old, other}, "in": withID(factInput(scope, subject), id)}
					}
					return map[string]any{"old": old, "in": withID(factInput(scope, subject), id)}
				}
			}
			id := "chosen-" + membrane.NewID()
			first := c.Raw(tt.query, vars(scope, id, "first"))
			if len(first.Errors) > 0 {
				t.Fatalf("first request: %+v", first.Errors)
			}
			records := c.Count(scope)
			again := c.Raw(tt.query, vars(scope, id, "first"))
			if len(again.Errors) > 0 || string(again.Data) != string(first.Data) {
				t.Fatalf("the same request again = %s %+v, want the first answer %s", again.Data, again.Errors, first.Data)
			}
			if n := c.Count(scope); n != records {
				t.Fatalf("%d records after the replay, want %d", n, records)
			}
			if errs := c.Fail("CONFLICT", tt.query, vars(scope, id, "different")); errs[0].Message != taken {
				t.Fatalf("another request with the id: %q", errs[0].Message)
			}
			if n := c.Count(scope); n != records {
				t.Fatalf("%d records after the conflict, want %d", n, records)
			}
			var trail struct {
				AuditLog struct{ Nodes []struct{ Action string } }
			}
			c.Do(`query($id: ID!) { auditLog(filter: {recordId: $id}) { nodes { action } } }`, map[string]any{"id": id}, &trail)
			if n := trail.AuditLog.Nodes; len(n) != 1 || n[0].Action != "CREATE" {
				t.Fatalf("trail of %s = %+v, want one create", id, n)
			}
		})
	}
	t.Run("another principal's same request", func(t *testing.T) {
		c := in(t)
		scope := neo4jtest.Scope(t)
		in := map[string]any{"in": withID(factInput(scope, "mine"), "chosen-"+membrane.NewID())}
		c.Do(create, in, nil)
		if errs := c.as(writer.Actor).Fail("CONFLICT", create, in); errs[0].Message != taken {
			t.Fatalf("another principal's request: %q", errs[0].Message)
		}
	})
	t.Run("the same request after a delete", func(t *testing.T) {
		c := in(t)
		scope := neo4jtest.Scope(t)
		id := "chosen-" + membrane.NewID()
		in := map[string]any{"in": withID(factInput(scope, "deleted"), id)}
		c.Do(create, in, nil)
		c.Do(`mutation($id: ID!) { deleteRecord(id: $id) { id } }`, map[string]any{"id": id}, nil)
		if errs := c.Fail("CONFLICT", create, in); errs[0].Message != taken {
			t.Fatalf("the request after the delete: %q", errs[0].Message)
		}
		if n := c.Count(scope); n != 0 {
			t.Fatalf("%d records, want 0", n)
		}
	})
}

// TestOutcomeUnknown: a createRecord whose COMMIT answer is lost (a Bolt
// proxy between the server and Neo4j forwards the COMMIT, swallows its
// answer and closes the connection) is OUTCOME_UNKNOWN, with a message
// naming no driver detail, and was written; the same request again (a
// chosen id, no key) answers with that record instead of writing another.
func TestOutcomeUnknown(t *testing.T) {
	p := neo4jtest.NewBoltProxy(t)
	c := newClient(t)
	c.DB = p.Open(t)
	c.URL = c.Serve(nil)
	scope := neo4jtest.Scope(t)
	id := "chosen-" + membrane.NewID()
	in := factInput(scope, "lost answer")
	in["id"] = id
	q := `mutation($in: RecordInput!) { createRecord(input: $in) { id version } }`

	p.DropAnswerTo(neo4jtest.SigCommit)
	errs := c.Fail("OUTCOME_UNKNOWN", q, map[string]any{"in": in})
	p.Wait(t)
	for _, leak := range []string{"neo4j", "bolt", "connectivity", "eof", "commit:"} {
		if strings.Contains(strings.ToLower(errs[0].Message), leak) {
			t.Fatalf("message leaks %q: %s", leak, errs[0].Message)
		}
	}
	if n := c.Count(scope); n != 1 {
		t.Fatalf("%d records after OUTCOME_UNKNOWN, want the 1 that committed", n)
	}
	var again struct{ CreateRecord struct{ ID string } }
	c.Do(q, map[string]any{"in": in}, &again)
	if again.CreateRecord.ID != id {
		t.Fatalf("the retry answered %q, want %q", again.CreateRecord.ID, id)
	}
	if n := c.Count(scope); n != 1 {
		t.Fatalf("%d records after the retry, want 1", n)
	}
}

// Values out of their documented bounds are refused naming the field, and
// nothing is written (issue 15: a salience of the largest float topped
// every ordering; dependsOn [""] was stored).
func TestOutOfBoundInputNamesTheField(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	semantic := func(salience float64) map[string]any {
		return map[string]any{"type": "SEMANTIC", "scope": scope, "salience": salience,
			"payload": map[string]any{"semantic": map[string]any{"subject": "s", "predicate": "p"}}}
	}
	tests := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"createRecord salience of the largest float", `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`,
			map[string]any{"in": semantic(math.MaxFloat64)}, "salience"},
		{"createRecord salience above the maximum", `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`,
			map[string]any{"in": semantic(membrane.MaxSalience + 1)}, "salience"},
		{"ingestBatch salience of the largest float", `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`,
			map[string]any{"in": []any{semantic(1), semantic(math.MaxFloat64)}}, "inputs[1].salience"},
		{"ingestToolOutput dependsOn empty", `mutation($in: IngestToolOutputInput!) { ingestToolOutput(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"source": "agent", "toolName": "bash", "scope": scope, "dependsOn": []any{""}}}, "dependsOn[0]"},
		{"createRecord toolGraph dependsOn blank", `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{
				"toolGraph": []any{map[string]any{"id": "1", "tool": "bash", "dependsOn": []any{" "}}}}}}}, "payload.toolGraph[0].dependsOn[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := c.Fail("BAD_USER_INPUT", tt.query, tt.vars)
			fields, _ := errs[0].Extensions["fields"].([]any)
			var named []any
			for _, f := range fields {
				named = append(named, f.(map[string]any)["field"])
			}
			if !slices.Contains(named, any(tt.field)) {
				t.Fatalf("fields = %v, want %s", named, tt.field)
			}
		})
	}
	if n := c.Count(scope); n != 0 {
		t.Fatalf("out-of-bound input wrote %d records", n)
	}
}
