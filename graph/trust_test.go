package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// The matrix: a reader with ceiling MEDIUM and one scope, against records
// below, at, one above and two above the ceiling, in its scope, in another
// scope and unscoped.
var (
	levels = []struct {
		name, sens string
		want       string // what the reader gets in its scope: full, redacted, none
	}{
		{"below", "LOW", "full"}, {"at", "MEDIUM", "full"}, {"one above", "HIGH", "redacted"}, {"two above", "HYPER", "none"},
	}
	places = []string{"in scope", "out of scope", "unscoped"}
)

type matrix struct {
	c      *client // admin
	reader *client
	tag    string
	ids    map[string]string // "level/place" -> id
	scopes map[string]string // place -> scope
}

func newMatrix(t *testing.T) *matrix {
	in, out := neo4jtest.Scope(t), neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{in}}
	c := newClient(t, reader)
	m := &matrix{c: c, reader: c.as(reader.Actor), tag: "matrix-" + membrane.NewID(), ids: map[string]string{},
		scopes: map[string]string{"in scope": in, "out of scope": out, "unscoped": ""}}
	for _, l := range levels {
		for _, p := range places {
			m.ids[l.name+"/"+p] = c.Create(m.scopes[p], "SEMANTIC", gqltest.Fact(l.name+" "+p), map[string]any{"sensitivity": l.sens, "tags": []any{m.tag}})
		}
	}
	return m
}

// want is what the reader must see of a record: "full", "redacted" or "none".
func (m *matrix) want(level, place string) string {
	if place == "out of scope" {
		return "none"
	}
	for _, l := range levels {
		if l.name == level {
			return l.want
		}
	}
	panic(level)
}

func TestGatingMatrix(t *testing.T) {
	m := newMatrix(t)
	const sel = `id redacted payload { __typename } provenance { sources { ref } } auditLog { nodes { action } }`
	check := func(t *testing.T, name string, got map[string]any, want string) {
		t.Helper()
		switch want {
		case "full":
			if got == nil || got["redacted"] != false || got["payload"] == nil || len(got["auditLog"].(map[string]any)["nodes"].([]any)) != 1 ||
				len(got["provenance"].(map[string]any)["sources"].([]any)) != 1 {
				t.Fatalf("%s: want the full record, got %v", name, got)
			}
		case "redacted":
			if got == nil || got["redacted"] != true || got["payload"] != nil || len(got["auditLog"].(map[string]any)["nodes"].([]any)) != 0 ||
				got["provenance"] != nil {
				t.Fatalf("%s: want the redacted record, got %v", name, got)
			}
		case "none":
			if got != nil {
				t.Fatalf("%s: want nothing, got %v", name, got)
			}
		}
	}
	t.Run("record", func(t *testing.T) {
		for _, l := range levels {
			for _, p := range places {
				id, want := m.ids[l.name+"/"+p], m.want(l.name, p)
				resp := m.reader.Raw(`query($id: ID!) { record(id: $id) { `+sel+` } }`, map[string]any{"id": id})
				var got struct{ Record map[string]any }
				if len(resp.Errors) > 0 {
					if code := resp.Errors[0].Extensions["code"]; want != "none" || code != "NOT_FOUND" {
						t.Fatalf("%s %s: error %v", l.name, p, resp.Errors)
					}
				} else {
					_ = json.Unmarshal(resp.Data, &got)
				}
				check(t, l.name+" "+p, got.Record, want)
				// asOf is gated the same way.
				resp = m.reader.Raw(`query($id: ID!) { record(id: $id, asOf: "2100-01-01T00:00:00Z") { id redacted } }`, map[string]any{"id": id})
				if (len(resp.Errors) > 0) != (want == "none") {
					t.Fatalf("%s %s asOf: %s %v", l.name, p, resp.Data, resp.Errors)
				}
			}
		}
	})
	t.Run("records and totalCount", func(t *testing.T) {
		var got struct {
			Records struct {
				Nodes      []map[string]any
				TotalCount int
			}
		}
		m.reader.Do(`query($t: [String!]) { records(filter: {tags: $t}, first: 100) { nodes { `+sel+` } totalCount } }`, map[string]any{"t": []any{m.tag}}, &got)
		byID := map[string]map[string]any{}
		for _, n := range got.Records.Nodes {
			byID[n["id"].(string)] = n
		}
		want := 0
		for _, l := range levels {
			for _, p := range places {
				w := m.want(l.name, p)
				check(t, l.name+" "+p, byID[m.ids[l.name+"/"+p]], w)
				if w != "none" {
					want++
				}
			}
		}
		if len(got.Records.Nodes) != want || got.Records.TotalCount != want {
			t.Fatalf("nodes %d, totalCount %d, want %d", len(got.Records.Nodes), got.Records.TotalCount, want)
		}
	})
	t.Run("auditLog", func(t *testing.T) {
		for _, l := range levels {
			for _, p := range places {
				var got struct {
					AuditLog struct{ Nodes []struct{ RecordID string } }
				}
				m.reader.Do(`query($id: ID!) { auditLog(filter: {recordId: $id}) { nodes { recordId } } }`, map[string]any{"id": m.ids[l.name+"/"+p]}, &got)
				if n, full := len(got.AuditLog.Nodes), m.want(l.name, p) == "full"; (n == 1) != full || n > 1 {
					t.Fatalf("%s %s: %d audit entries", l.name, p, n)
				}
			}
		}
	})
	t.Run("relations", func(t *testing.T) {
		// An unscoped low record relates to every record of the matrix.
		hub := m.c.Create("", "SEMANTIC", gqltest.Fact("hub"), map[string]any{"sensitivity": "LOW", "tags": []any{m.tag}})
		for _, id := range m.ids {
			m.c.Do(`mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: RELATED_TO, targetId: $b) { weight } }`, map[string]any{"a": hub, "b": id}, nil)
		}
		var got struct {
			Record struct {
				Relations struct {
					Edges []struct {
						Node struct {
							ID       string
							Redacted bool
						}
					}
				}
			}
		}
		m.reader.Do(`query($id: ID!) { record(id: $id) { relations(first: 100) { edges { node { id redacted } } } } }`, map[string]any{"id": hub}, &got)
		seen := map[string]bool{}
		for _, e := range got.Record.Relations.Edges {
			seen[e.Node.ID] = e.Node.Redacted
		}
		for _, l := range levels {
			for _, p := range places {
				redacted, ok := seen[m.ids[l.name+"/"+p]]
				switch w := m.want(l.name, p); {
				case w == "none" && ok, w != "none" && !ok, w == "redacted" && !redacted, w == "full" && redacted:
					t.Fatalf("%s %s: listed=%v redacted=%v, want %s", l.name, p, ok, redacted, w)
				}
			}
		}
		// A redacted record shows no relations of its own.
		var red struct {
			Record struct {
				Relations struct{ Edges []any }
			}
		}
		m.reader.Do(`query($id: ID!) { record(id: $id) { relations { edges { cursor } } } }`, map[string]any{"id": m.ids["one above/in scope"]}, &red)
		if len(red.Record.Relations.Edges) != 0 {
			t.Fatalf("redacted record's relations: %v", red.Record.Relations.Edges)
		}
	})
}

func TestTraversalsStopAtHiddenRecords(t *testing.T) {
	scope := neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := newClient(t, reader)
	r := c.as(reader.Actor)
	// Two supersede chains: a <- hidden(HYPER) <- b, and x <- red(HIGH) <- y.
	chain := func(middle string) (string, string, string) {
		first := c.Create(scope, "SEMANTIC", gqltest.Fact("first"), map[string]any{"sensitivity": "LOW"})
		var mid, last struct{ Supersede struct{ ID string } }
		in := factInput(scope, "middle")
		in["sensitivity"] = middle
		c.Do(supersedeQ, map[string]any{"old": first, "in": in}, &mid)
		c.Do(supersedeQ, map[string]any{"old": mid.Supersede.ID, "in": factInput(scope, "last")}, &last)
		return first, mid.Supersede.ID, last.Supersede.ID
	}
	a, hidden, b := chain("HYPER")
	x, red, y := chain("HIGH")
	type lin struct {
		Lineage struct {
			Nodes []struct {
				Depth  int
				Record struct {
					ID       string
					Redacted bool
				}
			}
			Edges []struct{ SourceID, TargetID string }
		}
	}
	q := `query($id: ID!, $d: LineageDirection) { lineage(id: $id, direction: $d, maxDepth: 10) { nodes { depth record { id redacted } } edges { sourceId targetId } } }`
	ids := func(l lin) []string {
		var out []string
		for _, n := range l.Lineage.Nodes {
			out = append(out, fmt.Sprint(n.Record.ID, ":", n.Depth, ":", n.Record.Redacted))
		}
		sort.Strings(out)
		return out
	}
	t.Run("hidden record ends the lineage and leaks nothing", func(t *testing.T) {
		var l lin
		r.Do(q, map[string]any{"id": b}, &l)
		if got := ids(l); len(got) != 1 || got[0] != b+":0:false" || len(l.Lineage.Edges) != 0 {
			t.Fatalf("lineage from b = %v edges %v", got, l.Lineage.Edges)
		}
		raw, _ := json.Marshal(l)
		if bytes.Contains(raw, []byte(hidden)) || bytes.Contains(raw, []byte(a)) {
			t.Fatalf("lineage leaks the hidden record or what lies behind it: %s", raw)
		}
		r.Do(q, map[string]any{"id": a, "d": "DESCENDANTS"}, &l)
		if got := ids(l); len(got) != 1 {
			t.Fatalf("lineage from a = %v", got)
		}
		// The admin sees the whole chain.
		c.Do(q, map[string]any{"id": b}, &l)
		if len(l.Lineage.Nodes) != 3 {
			t.Fatalf("admin lineage = %v", ids(l))
		}
	})
	t.Run("redacted record is shown but not expanded", func(t *testing.T) {
		var l lin
		r.Do(q, map[string]any{"id": y}, &l)
		want := []string{red + ":1:true", y + ":0:false"}
		sort.Strings(want)
		if got := ids(l); strings.Join(got, ",") != strings.Join(want, ",") || len(l.Lineage.Edges) != 1 {
			t.Fatalf("lineage from y = %v edges %v, want %v", got, l.Lineage.Edges, want)
		}
		if raw, _ := json.Marshal(l); bytes.Contains(raw, []byte(x)) {
			t.Fatal("lineage expanded through the redacted record")
		}
	})
	t.Run("history and lineage fields", func(t *testing.T) {
		var got struct {
			Record struct {
				History    []struct{ ID string }
				Current    struct{ ID string }
				Supersedes []struct {
					ID       string
					Redacted bool
				}
			}
		}
		sel := `query($id: ID!) { record(id: $id) { history { id } current { id } supersedes { id redacted } } }`
		r.Do(sel, map[string]any{"id": b}, &got)
		if len(got.Record.History) != 1 || got.Record.Current.ID != b || len(got.Record.Supersedes) != 0 {
			t.Fatalf("b as the reader sees it = %+v", got.Record)
		}
		r.Do(sel, map[string]any{"id": y}, &got)
		if len(got.Record.History) != 2 || len(got.Record.Supersedes) != 1 || !got.Record.Supersedes[0].Redacted {
			t.Fatalf("y as the reader sees it = %+v", got.Record)
		}
		r.Do(sel, map[string]any{"id": a}, &got)
		if got.Record.Current.ID != a {
			t.Fatalf("current of a must not reach past the hidden record: %+v", got.Record)
		}
	})
}

func TestWritesAreGated(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	writer := membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}}
	c := newClient(t, writer, reader)
	w, rd := c.as(writer.Actor), c.as(reader.Actor)
	visible := c.Create(scope, "SEMANTIC", gqltest.Fact("v"), map[string]any{"sensitivity": "LOW"})
	redacted := c.Create(scope, "SEMANTIC", gqltest.Fact("r"), map[string]any{"sensitivity": "HIGH"})
	invisible := c.Create(scope, "SEMANTIC", gqltest.Fact("i"), map[string]any{"sensitivity": "HYPER"})
	elsewhere := c.Create(other, "SEMANTIC", gqltest.Fact("e"), map[string]any{"sensitivity": "LOW"})
	create := `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`
	in := func(sens, sc string) map[string]any {
		x := factInput(sc, "new")
		x["sensitivity"] = sens
		return map[string]any{"in": x}
	}
	tests := []struct {
		name   string
		client *client
		code   string
		query  string
		vars   map[string]any
	}{
		{"reader creates", rd, "FORBIDDEN", create, in("LOW", scope)},
		{"reader ingests", rd, "FORBIDDEN", `mutation { ingestEvent(input: {source: "a", eventKind: "k", ref: "r"}) { id } }`, nil},
		{"reader revises", rd, "FORBIDDEN", retractQ, map[string]any{"id": visible}},
		{"writer creates above its ceiling", w, "FORBIDDEN", create, in("HIGH", scope)},
		{"writer creates outside its scopes", w, "FORBIDDEN", create, in("LOW", other)},
		{"writer batch with one record outside", w, "FORBIDDEN", `mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`,
			map[string]any{"in": []any{in("LOW", scope)["in"], in("LOW", other)["in"]}}},
		{"writer revises a redacted record", w, "FORBIDDEN", retractQ, map[string]any{"id": redacted}},
		{"writer revises an invisible record", w, "NOT_FOUND", retractQ, map[string]any{"id": invisible}},
		{"writer revises out of scope", w, "NOT_FOUND", retractQ, map[string]any{"id": elsewhere}},
		{"writer supersedes into a higher sensitivity", w, "FORBIDDEN", supersedeQ, map[string]any{"old": visible, "in": in("HIGH", scope)["in"]}},
		{"writer relates to an invisible record", w, "NOT_FOUND", `mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: $b) { weight } }`, map[string]any{"a": visible, "b": invisible}},
		{"writer merges with a redacted record", w, "FORBIDDEN", mergeQ, map[string]any{"ids": []any{visible, redacted}, "in": factInput(scope, "m")}},
		{"writer contests with a redacted record", w, "FORBIDDEN", `mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref) { id } }`, map[string]any{"id": visible, "ref": redacted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.snapshot(scope) + c.snapshot(other)
			tt.client.Fail(tt.code, tt.query, tt.vars)
			if after := c.snapshot(scope) + c.snapshot(other); after != before {
				t.Fatal("a forbidden write changed the database")
			}
		})
	}
	t.Run("contest by an invisible record is refused as by a missing one", func(t *testing.T) {
		// Neither a link to it nor an oracle: the id of a record the writer
		// cannot see gets the answer of an id that names nothing.
		q := `mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref) { contestEvidence } }`
		before := c.snapshot(scope)
		hidden := w.Fail("NOT_FOUND", q, map[string]any{"id": visible, "ref": invisible})
		missingID := membrane.NewID()
		missing := w.Fail("NOT_FOUND", q, map[string]any{"id": visible, "ref": missingID})
		if strings.ReplaceAll(hidden[0].Message, invisible, "ID") != strings.ReplaceAll(missing[0].Message, missingID, "ID") {
			t.Fatalf("messages differ: %q and %q", hidden[0].Message, missing[0].Message)
		}
		if c.snapshot(scope) != before {
			t.Fatal("a refused contest changed the database")
		}
	})
	t.Run("the audit actor is the principal, whatever actor says", func(t *testing.T) {
		var got struct{ Reinforce struct{ ID string } }
		w.Do(`mutation($id: ID!) { reinforce(id: $id, actor: "admin") { id } }`, map[string]any{"id": visible}, &got)
		r := c.get(visible)
		last := r.AuditLog.Nodes[len(r.AuditLog.Nodes)-1]
		if last.Actor != writer.Actor || last.ActorDetail != "admin" {
			t.Fatalf("audit = %+v", last)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	scope := neo4jtest.Scope(t)
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := newClient(t, reader)
	r := c.as(reader.Actor)
	low := c.Create(scope, "SEMANTIC", gqltest.Fact("low"), map[string]any{"sensitivity": "LOW"})
	medium := c.Create(scope, "SEMANTIC", gqltest.Fact("medium"), map[string]any{"sensitivity": "MEDIUM"})
	post := func(key string, headers map[string]string) (int, gqltest.Response) {
		body, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { record(id: $id) { id redacted } }`, "variables": map[string]any{"id": medium}})
		req, _ := http.NewRequest(http.MethodPost, c.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", key)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out gqltest.Response
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	tests := []struct {
		name     string
		auth     string
		headers  map[string]string
		status   int
		code     string
		redacted bool
	}{
		{"no key", "", nil, 401, "UNAUTHENTICATED", false},
		{"wrong key", "Bearer nope", nil, 401, "UNAUTHENTICATED", false},
		{"not a bearer", "Basic " + r.Key, nil, 401, "UNAUTHENTICATED", false},
		{"the reader's key", "Bearer " + r.Key, nil, 200, "", false},
		// The scheme is case-insensitive (RFC 7235 §2.1), and it may be
		// followed by more than one space.
		{"lower-case scheme", "bearer " + r.Key, nil, 200, "", false},
		{"upper-case scheme", "BEARER  " + r.Key, nil, 200, "", false},
		{"scheme without a key", "bearer", nil, 401, "UNAUTHENTICATED", false},
		{"scheme glued to the key", "Bearer" + r.Key, nil, 401, "UNAUTHENTICATED", false},
		{"narrowed ceiling redacts more", "Bearer " + r.Key, map[string]string{"X-Membrane-Max-Sensitivity": "low"}, 200, "", true},
		{"widened ceiling", "Bearer " + r.Key, map[string]string{"X-Membrane-Max-Sensitivity": "hyper"}, 403, "FORBIDDEN", false},
		{"unknown ceiling", "Bearer " + r.Key, map[string]string{"X-Membrane-Max-Sensitivity": "secret"}, 400, "BAD_USER_INPUT", false},
		{"widened scopes", "Bearer " + r.Key, map[string]string{"X-Membrane-Scopes": scope + ",other"}, 403, "FORBIDDEN", false},
		{"narrowed scopes", "Bearer " + r.Key, map[string]string{"X-Membrane-Scopes": scope}, 200, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := post(tt.auth, tt.headers)
			if status != tt.status {
				t.Fatalf("status = %d, want %d (%+v)", status, tt.status, out.Errors)
			}
			if tt.code != "" {
				if len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != tt.code {
					t.Fatalf("errors = %+v, want %s", out.Errors, tt.code)
				}
				return
			}
			var got struct{ Record struct{ Redacted bool } }
			_ = json.Unmarshal(out.Data, &got)
			if len(out.Errors) > 0 || got.Record.Redacted != tt.redacted {
				t.Fatalf("data = %s errors = %+v, want redacted=%v", out.Data, out.Errors, tt.redacted)
			}
		})
	}
	t.Run("narrowing to no scopes hides scoped records", func(t *testing.T) {
		status, out := post("Bearer "+r.Key, map[string]string{"X-Membrane-Scopes": ""})
		if status != 200 || len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != "NOT_FOUND" {
			t.Fatalf("status %d errors %+v", status, out.Errors)
		}
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(c.URL + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s without a key: %v %v", path, resp.StatusCode, err)
		}
		resp.Body.Close()
	}
	_ = low
}
