package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// everyField returns a selection of every field of def, built from the
// parsed schema so that a field added later is selected too. Record is
// expanded in full twice on a path (a record and the records it leads to),
// then only by id, which bounds the query. A field with a required argument
// that has no default fails the test: it needs a value chosen here.
func everyField(t *testing.T, s *ast.Schema, def *ast.Definition, records int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("__typename")
	if def.Kind == ast.Union || def.Kind == ast.Interface {
		for _, p := range s.GetPossibleTypes(def) {
			fmt.Fprintf(&b, " ... on %s { %s }", p.Name, everyField(t, s, p, records))
		}
		return b.String()
	}
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		for _, a := range f.Arguments {
			if a.Type.NonNull && a.DefaultValue == nil {
				t.Fatalf("%s.%s has a required argument %s: give it a value in everyField", def.Name, f.Name, a.Name)
			}
		}
		ft := s.Types[f.Type.Name()]
		b.WriteString(" " + f.Name)
		switch ft.Kind {
		case ast.Scalar, ast.Enum:
		default:
			n := records
			if ft.Name == "Record" {
				n--
			}
			if n < 0 {
				b.WriteString(" { id }")
			} else {
				b.WriteString(" { " + everyField(t, s, ft, n) + " }")
			}
		}
	}
	return b.String()
}

// checkValues walks a response value along its schema type: no null where
// the type forbids it, every enum value one the enum declares, every
// DateTime a real instant (not Go's zero time); and on every record that
// is redacted, nothing of what the redaction rule hides.
func checkValues(t *testing.T, s *ast.Schema, path string, v any, typ *ast.Type) {
	t.Helper()
	if v == nil {
		if typ.NonNull {
			t.Errorf("%s: null in a non-null %s", path, typ)
		}
		return
	}
	if typ.Elem != nil {
		for i, e := range v.([]any) {
			checkValues(t, s, fmt.Sprintf("%s[%d]", path, i), e, typ.Elem)
		}
		return
	}
	def := s.Types[typ.Name()]
	switch def.Kind {
	case ast.Enum:
		if def.EnumValues.ForName(fmt.Sprint(v)) == nil {
			t.Errorf("%s: %q is not a value of %s", path, v, def.Name)
		}
	case ast.Scalar:
		if def.Name == "DateTime" {
			at, err := time.Parse(time.RFC3339Nano, v.(string))
			if err != nil || at.Year() < 2000 {
				t.Errorf("%s: %v is not a real instant", path, v)
			}
		}
	default:
		obj := v.(map[string]any)
		if def.Kind != ast.Object {
			def = s.Types[obj["__typename"].(string)]
		}
		for k, fv := range obj {
			if k == "__typename" {
				continue
			}
			f := def.Fields.ForName(k)
			if f == nil {
				t.Fatalf("%s: %s has no field %s", path, def.Name, k)
			}
			checkValues(t, s, path+"."+k, fv, f.Type)
		}
		if def.Name == "Record" && obj["redacted"] == true {
			checkRedacted(t, path, obj)
		}
	}
}

// checkRedacted fails unless a redacted record shows nothing the rule of
// docs/security.md hides: no payload, provenance, lifecycle or contest
// evidence, no audit log, no relations of any kind.
func checkRedacted(t *testing.T, path string, rec map[string]any) {
	t.Helper()
	for _, k := range []string{"payload", "provenance", "lifecycle", "supersededBy"} {
		if rec[k] != nil {
			t.Errorf("%s: redacted record shows %s = %v", path, k, rec[k])
		}
	}
	for _, k := range []string{"contestEvidence", "supersedes", "derivedFrom", "derivatives", "contestedBy", "contests", "history"} {
		if l, ok := rec[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s: redacted record shows %s = %v", path, k, rec[k])
		}
	}
	if a, ok := rec["auditLog"].(map[string]any); !ok || len(a["nodes"].([]any)) != 0 || len(a["edges"].([]any)) != 0 {
		t.Errorf("%s: redacted record shows its audit log %v", path, rec["auditLog"])
	}
	if r, ok := rec["relations"].(map[string]any); !ok || len(r["edges"].([]any)) != 0 {
		t.Errorf("%s: redacted record shows relations %v", path, rec["relations"])
	}
	if c, ok := rec["current"].(map[string]any); !ok || c["id"] != rec["id"] {
		t.Errorf("%s: redacted record's current is %v, want itself", path, rec["current"])
	}
}

// TestRedactedRecordsEveryField selects every field reachable from Record,
// generated from the schema, on every read path, over records of every
// type one level above a reader's ceiling (and a record it sees in full
// that leads to them): no error, every value valid, and none of the hidden
// text anywhere in the response.
func TestRedactedRecordsEveryField(t *testing.T) {
	scope := neo4jtest.Scope(t)
	rd := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	opts := membranehttp.DefaultHandlerOptions()
	opts.ParserTokenLimit = 0
	opts.Limits = map[membrane.Role]graph.QueryLimits{
		membrane.RoleAdmin:  {Complexity: 0, Depth: 0, RootFields: 0},
		membrane.RoleReader: {Complexity: 0, Depth: 0, RootFields: 0},
	}
	setup, _ := gqltest.WithFeed(t)
	c := &client{gqltest.NewFull(t, setup, opts, rd)}
	reader := c.as(rd.Actor)
	cursor := reader.ChangeCursor()

	secret := "zqhidden" + strings.ReplaceAll(membrane.NewID(), "-", "")
	tag := "redact-" + membrane.NewID()
	life := map[string]any{"curve": "LINEAR", "halfLifeSeconds": 3600, "minSalience": 0.1, "maxAgeSeconds": 7200,
		"reinforcementGain": 0.2, "pinned": true, "deletionPolicy": "MANUAL_ONLY"}
	payloads := map[string]map[string]any{
		"EPISODIC": {"episodic": map[string]any{
			"timeline":    []any{map[string]any{"t": "2026-01-02T03:04:05Z", "eventKind": secret, "ref": secret, "summary": secret}},
			"toolGraph":   []any{map[string]any{"id": secret, "tool": secret, "args": map[string]any{"a": secret}, "result": secret, "timestamp": "2026-01-02T03:04:05Z", "dependsOn": []any{secret}}},
			"environment": map[string]any{"os": secret, "osVersion": secret, "toolVersions": map[string]any{"t": secret}, "workingDirectory": secret, "context": map[string]any{"c": secret}},
			"outcome":     "SUCCESS", "artifacts": []any{secret}, "toolGraphRef": secret, "sessionId": secret}},
		"WORKING": {"working": map[string]any{"threadId": secret, "state": "BLOCKED", "nextActions": []any{secret}, "openQuestions": []any{secret},
			"contextSummary": secret, "activeConstraints": []any{map[string]any{"type": secret, "key": secret, "value": secret, "required": true}}}},
		"SEMANTIC": {"semantic": map[string]any{"subject": secret, "predicate": secret, "object": secret, "revisionPolicy": secret,
			"validity": map[string]any{"mode": "TIMEBOXED", "conditions": map[string]any{"c": secret}, "start": "2026-01-01T00:00:00Z", "end": "2027-01-01T00:00:00Z"},
			"evidence": []any{map[string]any{"sourceType": secret, "sourceId": secret, "timestamp": "2026-01-02T03:04:05Z"}}}},
		"COMPETENCE": {"competence": map[string]any{"skillName": secret, "requiredTools": []any{secret}, "failureModes": []any{secret}, "fallbacks": []any{secret}, "version": secret,
			"triggers":    []any{map[string]any{"signal": secret, "conditions": map[string]any{"c": secret}}},
			"recipe":      []any{map[string]any{"step": secret, "tool": secret, "argsSchema": map[string]any{"a": secret}, "validation": secret}},
			"performance": map[string]any{"successCount": 3, "failureCount": 1, "successRate": 0.75, "avgLatencyMs": 12.5, "lastUsedAt": "2026-01-02T03:04:05Z"}}},
		"PLAN_GRAPH": {"planGraph": map[string]any{"planId": secret, "version": secret, "intent": secret, "constraints": map[string]any{"c": secret},
			"inputsSchema": map[string]any{"i": secret}, "outputsSchema": map[string]any{"o": secret},
			"nodes":   []any{map[string]any{"id": "n1", "op": secret, "params": map[string]any{"p": secret}, "guards": map[string]any{"g": secret}}, map[string]any{"id": "n2", "op": secret}},
			"edges":   []any{map[string]any{"from": "n1", "to": "n2", "kind": "DATA"}},
			"metrics": map[string]any{"avgLatencyMs": 3.5, "failureRate": 0.1, "executionCount": 4, "lastExecutedAt": "2026-01-02T03:04:05Z"}}},
		"ENTITY": {"entity": map[string]any{"canonicalName": secret, "primaryType": secret, "types": []any{secret}, "summary": secret,
			"aliases": []any{map[string]any{"value": secret, "kind": secret, "locale": "en"}}, "identifiers": []any{map[string]any{"namespace": secret, "value": secret}}}},
	}
	hiddenExtra := func() map[string]any {
		return map[string]any{"sensitivity": "HIGH", "tags": []any{tag}, "lifecycle": life,
			"provenance": map[string]any{"createdBy": secret, "sources": []any{map[string]any{"kind": "ARTIFACT", "ref": secret, "hash": secret, "createdBy": secret, "timestamp": "2026-01-02T03:04:05Z"}}}}
	}
	id := membrane.NewID()
	word := "redactword" + id[len(id)-12:] // the random end of a UUIDv7
	visible := c.Create(scope, "SEMANTIC", gqltest.Fact(word), map[string]any{"sensitivity": "MEDIUM", "tags": []any{tag}})
	var hidden []string
	for typ, p := range payloads {
		id := c.Create(scope, typ, p, hiddenExtra())
		hidden = append(hidden, id)
		c.Do(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: RELATED_TO, targetId: $t, rationale: "seed") { sourceId } }`,
			map[string]any{"s": visible, "t": id}, nil)
	}
	// A redacted record on every lineage edge of the visible one: it
	// contests it, derives from it, and is superseded by it.
	in := hiddenExtra()
	in["type"], in["scope"], in["payload"] = "SEMANTIC", scope, payloads["SEMANTIC"]
	var forked struct{ Fork struct{ ID string } }
	c.Do(`mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, rationale: "seed") { id } }`, map[string]any{"id": visible, "in": in}, &forked)
	hidden = append(hidden, forked.Fork.ID)
	c.Do(`mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref, rationale: "seed") { id } }`, map[string]any{"id": visible, "ref": hidden[0]}, nil)
	old := c.Create(scope, "SEMANTIC", payloads["SEMANTIC"], hiddenExtra())
	hidden = append(hidden, old)
	var sup struct{ Supersede struct{ ID string } }
	c.Do(`mutation($old: ID!, $in: RecordInput!) { supersede(oldId: $old, newRecord: $in, rationale: "seed") { id } }`,
		map[string]any{"old": old, "in": map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": "MEDIUM", "tags": []any{tag}, "payload": gqltest.Fact(word)}}, &sup)
	awaitSearch(t, c)

	s := graph.NewExecutableSchema(graph.Config{}).Schema()
	rec := everyField(t, s, s.Types["Record"], 1)
	paths := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"record", `query($id: ID!) { record(id: $id) { ` + rec + ` } }`, map[string]any{"id": hidden[0]}, "record"},
		{"record visible", `query($id: ID!) { record(id: $id) { ` + rec + ` } }`, map[string]any{"id": visible}, "record"},
		{"record asOf", `query($id: ID!) { record(id: $id, asOf: "2100-01-01T00:00:00Z") { ` + rec + ` } }`, map[string]any{"id": hidden[1]}, "record"},
		{"records", `query($s: [String!], $t: [String!]) { records(filter: {scopes: $s, tags: $t}, first: 100) { ` + everyField(t, s, s.Types["RecordConnection"], 1) + ` } }`,
			map[string]any{"s": []any{scope}, "t": []any{tag}}, "records"},
		{"records asOf", `query($s: [String!], $t: [String!]) { records(filter: {scopes: $s, tags: $t}, first: 100, asOf: "2100-01-01T00:00:00Z") { nodes { ` + rec + ` } } }`,
			map[string]any{"s": []any{scope}, "t": []any{tag}}, "records"},
		{"retrieve", `query($q: String, $s: [String!]) { retrieve(input: {query: $q, scopes: $s, limit: 100}) { ` + everyField(t, s, s.Types["RetrieveResult"], 1) + ` } }`,
			map[string]any{"q": word, "s": []any{scope}}, "retrieve"},
		{"retrieveGraph", `query($q: String, $s: [String!]) { retrieveGraph(input: {query: $q, scopes: $s, maxHops: 2}) { ` + everyField(t, s, s.Types["RetrieveGraphResult"], 1) + ` } }`,
			map[string]any{"q": word, "s": []any{scope}}, "retrieveGraph"},
		{"lineage", `query($id: ID!) { lineage(id: $id, direction: BOTH) { ` + everyField(t, s, s.Types["Lineage"], 1) + ` } }`,
			map[string]any{"id": visible}, "lineage"},
		{"graph", `query($id: ID!) { graph(roots: [$id], hops: 3) { ` + everyField(t, s, s.Types["Lineage"], 1) + ` } }`,
			map[string]any{"id": visible}, "graph"},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			resp := reader.Raw(p.query, p.vars)
			// The whole body, errors and extensions included.
			if strings.Contains(string(resp.Body), secret) {
				t.Errorf("hidden text in the response: %s", resp.Body)
			}
			if len(resp.Errors) > 0 {
				t.Fatalf("errors: %+v", resp.Errors)
			}
			var data map[string]any
			if err := json.Unmarshal(resp.Data, &data); err != nil {
				t.Fatal(err)
			}
			if p.field == "retrieve" {
				// Retrieval matches only records seen in full
				// (docs/retrieval.md): a redacted hit would say what its
				// hidden text matched. The hits are there (else this
				// checks nothing), none redacted.
				hits := data["retrieve"].(map[string]any)["hits"].([]any)
				if len(hits) == 0 {
					t.Errorf("no hits: %s", resp.Data)
				}
				for i, h := range hits {
					if r := h.(map[string]any)["record"].(map[string]any); r["redacted"] == true {
						t.Errorf("hits[%d] is redacted record %v", i, r["id"])
					}
				}
			} else if !strings.Contains(string(resp.Data), `"redacted":true`) {
				// Every other path reaches a redacted record: else it
				// checks nothing of them.
				t.Errorf("no redacted record on this path: the test does not reach them: %.3000s", resp.Data)
			}
			checkValues(t, s, p.name, data[p.field], s.Query.Fields.ForName(p.field).Type)
		})
	}

	t.Run("recordChanged", func(t *testing.T) {
		sel := everyField(t, s, s.Types["RecordChange"], 1)
		st := reader.SubscribeSSE(t, c.URL, `subscription($f: ChangeFilter, $after: String) { recordChanged(filter: $f, after: $after) { `+sel+` } }`,
			map[string]any{"f": map[string]any{"scopes": []any{scope}, "ids": hidden}, "after": cursor})
		seen := map[string]bool{}
		for len(seen) < len(hidden) {
			e := st.Next()
			if strings.Contains(string(e.Body), secret) {
				t.Fatalf("hidden text in an event: %s", e.Body)
			}
			if len(e.Errors) > 0 {
				t.Fatalf("errors: %+v", e.Errors)
			}
			var data map[string]any
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatal(err)
			}
			ch := data["recordChanged"].(map[string]any)
			if ch["redacted"] != true {
				t.Fatalf("event of a hidden record not redacted: %s", e.Data)
			}
			checkValues(t, s, "recordChanged", ch, ast.NonNullNamedType("RecordChange", nil))
			seen[ch["recordId"].(string)] = true
		}
		if !slices.ContainsFunc(hidden, func(id string) bool { return seen[id] }) {
			t.Fatal("no event of a hidden record")
		}
	})
}
