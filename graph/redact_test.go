package graph_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
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
		checkScalar(t, path, def.Name, v)
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
			if r, ok := fieldRanges[def.Name+"."+k]; ok && fv != nil {
				checkRange(t, path+"."+k, fv, r)
			}
		}
		if def.Name == "Record" && obj["redacted"] == true {
			checkRedacted(t, path, obj)
		}
	}
}

// checkScalar fails unless v is a value of the scalar named name: a
// DateTime a real instant (not Go's zero time), an Int a whole number in
// the 32-bit range GraphQL gives Int (a sentinel such as math.MinInt64 is
// not one), a Float a number, a String, ID or Boolean of its JSON type.
func checkScalar(t *testing.T, path, name string, v any) {
	t.Helper()
	switch name {
	case "DateTime":
		s, _ := v.(string)
		if at, err := time.Parse(time.RFC3339Nano, s); err != nil || at.Year() < 2000 {
			t.Errorf("%s: %v is not a real instant", path, v)
		}
	case "Int":
		if n, ok := v.(float64); !ok || n != math.Trunc(n) || n < math.MinInt32 || n > math.MaxInt32 {
			t.Errorf("%s: %v is not an Int", path, v)
		}
	case "Float":
		if _, ok := v.(float64); !ok {
			t.Errorf("%s: %v is not a Float", path, v)
		}
	case "String", "ID":
		if _, ok := v.(string); !ok {
			t.Errorf("%s: %v is not a %s", path, v, name)
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			t.Errorf("%s: %v is not a Boolean", path, v)
		}
	}
}

// fieldRanges are the ranges the domain's validation keeps numbers in
// (internal/membrane, validate.go), by type and field: a value outside one
// is a zero value or a sentinel shown as if it were the record's.
var fieldRanges = map[string][2]float64{
	"Record.confidence":           {0, 1},
	"Record.salience":             {0, membrane.MaxSalience},
	"Record.version":              {1, math.MaxInt32},
	"Lifecycle.halfLifeSeconds":   {1, math.MaxInt32},
	"Lifecycle.minSalience":       {0, 1},
	"Lifecycle.maxAgeSeconds":     {0, math.MaxInt32},
	"Lifecycle.reinforcementGain": {0, 1},
	"Lifecycle.baseSalience":      {0, membrane.MaxSalience},
	"Relation.weight":             {0, 1},
}

// checkRange fails unless v is a number within r.
func checkRange(t *testing.T, path string, v any, r [2]float64) {
	t.Helper()
	if n, ok := v.(float64); !ok || n < r[0] || n > r[1] {
		t.Errorf("%s: %v is not in [%g, %g]", path, v, r[0], r[1])
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

	// The graph downloads (internal/http): the graph query's read as
	// files, every attribute of a node or edge checked as its GraphQL
	// field is.
	for path, parse := range map[string]func(testing.TB, []byte) gqltest.Drawing{
		"/graph.cyjs": gqltest.ParseCytoscape, "/graph.graphml": gqltest.ParseGraphML,
	} {
		t.Run(path, func(t *testing.T) {
			body := reader.download(t, path+"?hops=3&roots="+neturl.QueryEscape(visible))
			if strings.Contains(string(body), secret) {
				t.Errorf("hidden text in the download: %s", body)
			}
			d := parse(t, body)
			redacted := 0
			for id, n := range d.Nodes {
				checkDownloadNode(t, s, fmt.Sprintf("%s node %s", path, id), id, n)
				if n["redacted"] == "true" {
					redacted++
				}
			}
			if redacted == 0 {
				t.Errorf("no redacted node: the test does not reach them: %.3000s", body)
			}
			for id, e := range d.Edges {
				p := fmt.Sprintf("%s edge %s", path, id)
				checkEnum(t, s, p+".predicate", "RelationPredicate", e["predicate"])
				if w, err := strconv.ParseFloat(e["weight"], 64); err != nil || w < 0 || w > 1 {
					t.Errorf("%s.weight: %q is not in [0, 1]", p, e["weight"])
				}
			}
		})
	}

	// The MCP tools (internal/mcp) that return records: every field of
	// their answers checked by its name.
	t.Run("mcp", func(t *testing.T) {
		sess := reader.mcpSession(t)
		calls := []struct {
			tool     string
			args     map[string]any
			redacted bool // the answer must hold a redacted record
		}{
			{"get_record", map[string]any{"id": hidden[0]}, true},
			{"get_record", map[string]any{"id": hidden[1], "as_of": "2100-01-01T00:00:00Z"}, true},
			{"list_records", map[string]any{"scopes": []any{scope}, "tags": []any{tag}, "page_size": 100}, true},
			{"lineage", map[string]any{"id": visible}, true},
			{"lineage", map[string]any{"id": hidden[len(hidden)-1]}, true},
			// recall matches only records seen in full, as retrieve does.
			{"recall", map[string]any{"query": word, "scopes": []any{scope}, "limit": 100}, false},
		}
		for _, call := range calls {
			res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: call.tool, Arguments: call.args})
			if err != nil {
				t.Fatalf("%s: %v", call.tool, err)
			}
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("%s(%v): %+v", call.tool, call.args, res.Content)
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("%s: hidden text in the answer: %s", call.tool, b)
			}
			if got := strings.Contains(string(b), `"redacted":true`); got != call.redacted {
				t.Errorf("%s(%v): redacted record in the answer %v, want %v: %.3000s", call.tool, call.args, got, call.redacted, b)
			}
			var out any
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			checkMCPValues(t, call.tool, out)
		}
	})
}

// download GETs path with the client's key and returns the body of a 200.
func (c *client) download(t *testing.T, path string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, c.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %.2000s", path, resp.StatusCode, err, body)
	}
	return body
}

// mcpSession opens an MCP session at /mcp with the client's key.
func (c *client) mcpSession(t *testing.T) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{key: c.Key}}
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "redact-test", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: c.URL + mcp.Path, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// bearer sends every request with an API key.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// checkDownloadNode fails unless every attribute of a downloaded node is
// a valid value: its enums in their GraphQL enums, depth a whole number
// >= 0, redacted a boolean, id and caption not empty.
func checkDownloadNode(t *testing.T, s *ast.Schema, path, id string, n map[string]string) {
	t.Helper()
	checkEnum(t, s, path+".type", "MemoryType", n["type"])
	checkEnum(t, s, path+".status", "RevisionStatus", n["status"])
	checkEnum(t, s, path+".sensitivity", "Sensitivity", n["sensitivity"])
	if d, err := strconv.Atoi(n["depth"]); err != nil || d < 0 {
		t.Errorf("%s.depth: %q is not a depth", path, n["depth"])
	}
	if _, err := strconv.ParseBool(n["redacted"]); err != nil {
		t.Errorf("%s.redacted: %q is not a boolean", path, n["redacted"])
	}
	if id == "" || n["caption"] == "" {
		t.Errorf("%s: empty id or caption: %v", path, n)
	}
}

// checkEnum fails unless v is a value of the GraphQL enum named enum.
func checkEnum(t *testing.T, s *ast.Schema, path, enum, v string) {
	t.Helper()
	def := s.Types[enum]
	if def == nil {
		t.Fatalf("no enum %s in the schema", enum)
	}
	if def.EnumValues.ForName(v) == nil {
		t.Errorf("%s: %q is not a value of %s", path, v, enum)
	}
}

// checkMCPValues walks an MCP tool's answer and checks each field by its
// name (the tools' field names mean one thing throughout): enums among
// the domain's values, instants parseable, numbers in the domain's
// ranges, ids and captions not empty.
func checkMCPValues(t *testing.T, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			checkMCPValues(t, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case map[string]any:
		for k, fv := range v {
			p := path + "." + k
			checkMCPField(t, p, k, fv)
			checkMCPValues(t, p, fv)
		}
	}
}

func checkMCPField(t *testing.T, path, name string, v any) {
	t.Helper()
	str, _ := v.(string)
	num, isNum := v.(float64)
	valid := true
	switch name {
	case "type":
		valid = slices.Contains(membrane.MemoryTypes, membrane.MemoryType(str))
	case "status":
		valid = membrane.RevisionStatus(str).Valid()
	case "sensitivity":
		valid = membrane.Sensitivity(str).Valid()
	case "predicate":
		valid = membrane.Predicate(str).Valid()
	case "created_at", "updated_at", "when", "at":
		at, err := time.Parse(time.RFC3339, str)
		valid = err == nil && at.Year() >= 2000
	case "version":
		valid = isNum && num >= 1 && num == math.Trunc(num)
	case "depth":
		valid = isNum && num >= 0 && num == math.Trunc(num)
	case "confidence", "score", "weight":
		valid = isNum && num >= 0 && num <= 1
	case "salience":
		valid = isNum && num >= 0 && num <= membrane.MaxSalience
	case "id", "caption", "source_id", "target_id", "current":
		valid = str != ""
	case "redacted", "truncated", "has_more":
		_, valid = v.(bool)
	}
	if !valid {
		t.Errorf("%s: %v is not a valid %s", path, v, name)
	}
}
