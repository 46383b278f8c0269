package mcp_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/mcp"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// The trust matrix through MCP, as graph/trust_test.go runs it through
// GraphQL: readers and writers at several ceilings and scopes, some
// narrowing their key per request, call every tool on a fixture of
// records at every sensitivity, in their scopes, in others and unscoped,
// with relations, a supersede chain, a contest, a merge and a capture
// passing through records they may not see. Every answer, results and
// errors alike, is scanned for the id and the text of each record the
// caller may not see, and for the text of each it sees only redacted. The
// id of an invisible record the caller names itself gets the answer of an
// id that names nothing.

// fixtureRecord is a record of the matrix and what identifies it.
type fixtureRecord struct {
	name  string
	id    string
	level int    // its sensitivity level
	scope string // "" unscoped
	words []string
}

// trustCaller is one principal of the matrix and its effective trust
// (after narrowing), written out here rather than computed by the code
// under test: one level above the ceiling is redacted, two invisible, and
// records out of its scopes (unscoped ones aside) invisible.
type trustCaller struct {
	name    string
	p       membrane.Principal
	headers map[string]string
	ceiling int
	scopes  []string // nil: every scope
	bridge  bool     // through the stdio bridge rather than HTTP
}

func (c trustCaller) sees(r fixtureRecord) string {
	if r.scope != "" && c.scopes != nil && !slices.Contains(c.scopes, r.scope) {
		return "none"
	}
	switch {
	case r.level <= c.ceiling:
		return "full"
	case r.level == c.ceiling+1:
		return "redacted"
	}
	return "none"
}

func (c trustCaller) writer() bool { return c.p.Role == membrane.RoleWriter }

// word returns a token found nowhere else.
func word(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

type matrixFixture struct {
	srv     *testServer
	a, b    string // the scopes
	tag     string
	records []fixtureRecord
	byName  map[string]fixtureRecord
}

func (f *matrixFixture) add(name string, r *membrane.Record, words ...string) fixtureRecord {
	fr := fixtureRecord{name: name, id: r.ID, level: r.Sensitivity.Level(), scope: r.Scope, words: words}
	f.records = append(f.records, fr)
	f.byName[name] = fr
	return fr
}

// fact writes a semantic record whose text carries two words of its own
// and the word every recall of the matrix looks for.
func (f *matrixFixture) fact(t *testing.T, name, scope string, sens membrane.Sensitivity) fixtureRecord {
	t.Helper()
	w1, w2 := word("subj"), word("obj")
	in := membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope, Sensitivity: &sens, Tags: []string{f.tag},
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "zebrafact " + w1, Predicate: "guards", Object: "vault " + w2,
			Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "matrix"}}}}}
	r, err := f.srv.svc.Ingest.CreateRecord(f.srv.asAdmin(t), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.add(name, r, w1, w2)
}

func newMatrixFixture(t *testing.T, srv *testServer, a, b string) *matrixFixture {
	f := &matrixFixture{srv: srv, a: a, b: b, tag: word("matrix"), byName: map[string]fixtureRecord{}}
	ctx := srv.asAdmin(t)
	sens := []membrane.Sensitivity{membrane.SensitivityPublic, membrane.SensitivityLow, membrane.SensitivityMedium, membrane.SensitivityHigh, membrane.SensitivityHyper}
	for _, s := range sens {
		for place, scope := range map[string]string{"a": a, "b": b, "unscoped": ""} {
			f.fact(t, string(s)+"/"+place, scope, s)
		}
	}
	// A hub every caller sees, related to every record of the matrix.
	hub := f.fact(t, "hub", "", membrane.SensitivityPublic)
	for _, r := range f.records {
		if r.id != hub.id {
			if _, err := srv.svc.Relate.AddRelation(ctx, hub.id, membrane.PredRelatedTo, r.id, nil, membrane.RevisionArgs{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A supersede chain through a hyper record: first <- middle <- last.
	first := f.fact(t, "chain first", a, membrane.SensitivityLow)
	supersede := func(name, old string, s membrane.Sensitivity) fixtureRecord {
		w1, w2 := word("subj"), word("obj")
		in := factInput(a, s, "zebrafact "+w1)
		in.Payload.Semantic.Object = "vault " + w2
		in.Tags = []string{f.tag}
		r, err := srv.svc.Revise.Supersede(ctx, old, in, membrane.RevisionArgs{Rationale: new("a newer version")})
		if err != nil {
			t.Fatal(err)
		}
		return f.add(name, r, w1, w2)
	}
	middle := supersede("chain middle", first.id, membrane.SensitivityHyper)
	supersede("chain last", middle.id, membrane.SensitivityLow)
	// A public record contested by a hyper one.
	disputed := f.fact(t, "disputed", a, membrane.SensitivityPublic)
	disputer := f.fact(t, "disputer", a, membrane.SensitivityHyper)
	if _, err := srv.svc.Revise.Contest(ctx, disputed.id, disputer.id, membrane.RevisionArgs{}); err != nil {
		t.Fatal(err)
	}
	// A public record merged from two hyper ones.
	s1, s2 := f.fact(t, "merge source 1", a, membrane.SensitivityHyper), f.fact(t, "merge source 2", a, membrane.SensitivityHyper)
	mw := word("merged")
	mergeIn := factInput(a, membrane.SensitivityPublic, "zebrafact "+mw)
	mergeIn.Tags = []string{f.tag}
	merged, err := srv.svc.Revise.Merge(ctx, []string{s1.id, s2.id}, mergeIn, membrane.RevisionArgs{})
	if err != nil {
		t.Fatal(err)
	}
	f.add("merged", merged, mw)
	// A hyper capture naming an entity: its episode, entity and fact.
	ename, ew := word("entity"), word("said")
	hyper := membrane.SensitivityHyper
	c, err := srv.svc.Capture.Capture(ctx, membrane.CaptureInput{Source: "matrix", Scope: &a, Sensitivity: &hyper, Tags: []string{f.tag},
		Content: map[string]any{"subject": ename, "predicate": "whispered", "object": "zebrafact vault " + ew}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.add("capture", c.Primary, ename, ew)
	for i, r := range c.Created {
		f.add(fmt.Sprintf("capture created %d", i), r, ename)
	}
	if err := srv.db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTrustMatrix(t *testing.T) {
	a, b := neo4jtest.Scope(t), neo4jtest.Scope(t)
	p := func(role membrane.Role, s membrane.Sensitivity, scopes ...string) membrane.Principal {
		return membrane.Principal{Actor: string(role) + "-" + membrane.NewID(), Role: role, MaxSensitivity: s, Scopes: scopes}
	}
	callers := []trustCaller{
		{name: "reader medium in a", p: p(membrane.RoleReader, membrane.SensitivityMedium, a), ceiling: 2, scopes: []string{a}},
		{name: "reader low everywhere", p: p(membrane.RoleReader, membrane.SensitivityLow, membrane.AllScopes), ceiling: 1},
		{name: "reader hyper in b", p: p(membrane.RoleReader, membrane.SensitivityHyper, b), ceiling: 4, scopes: []string{b}},
		{name: "writer medium in a", p: p(membrane.RoleWriter, membrane.SensitivityMedium, a), ceiling: 2, scopes: []string{a}},
		{name: "writer high in a and b narrowed to low in a", p: p(membrane.RoleWriter, membrane.SensitivityHigh, a, b), ceiling: 1, scopes: []string{a},
			headers: map[string]string{"X-Membrane-Max-Sensitivity": "low", "X-Membrane-Scopes": a}},
		{name: "reader high in a narrowed to no scope", p: p(membrane.RoleReader, membrane.SensitivityHigh, a), ceiling: 3, scopes: []string{},
			headers: map[string]string{"X-Membrane-Scopes": ""}},
	}
	// Two of them again through the stdio bridge, narrowing as its
	// environment narrows it.
	for _, i := range []int{0, 4} {
		c := callers[i]
		c.name += " (stdio bridge)"
		c.bridge = true
		callers = append(callers, c)
	}
	var principals []membrane.Principal
	for _, c := range callers[:6] {
		principals = append(principals, c.p)
	}
	srv := startServer(t, membranehttp.DefaultHandlerOptions(), principals...)
	f := newMatrixFixture(t, srv, a, b)
	admin := srv.connect(t, srv.admin, nil)

	for _, caller := range callers {
		t.Run(caller.name, func(t *testing.T) {
			var c *client
			if caller.bridge {
				o := mcp.BridgeOptions{URL: srv.URL, APIKey: srv.keys[caller.p.Actor], MaxSensitivity: caller.headers["X-Membrane-Max-Sensitivity"]}
				if s, ok := caller.headers["X-Membrane-Scopes"]; ok {
					o.Scopes = &s
				}
				c = bridged(t, o)
			} else {
				c = srv.connect(t, caller.p.Actor, caller.headers)
			}
			m := &matrixRun{t: t, f: f, caller: caller, c: c, admin: admin}
			m.reads()
			if caller.writer() {
				m.writes()
			}
		})
	}
	// Last, as it writes the hidden entity's name where every caller sees
	// it: a capture naming an entity the writer may not see creates its
	// own, and links to nothing of the fixture.
	t.Run("a capture naming a hidden entity", func(t *testing.T) {
		w := srv.connect(t, callers[3].p.Actor, nil)
		var rem mcp.RememberOutput
		w.ok("remember", map[string]any{"content": map[string]any{"subject": f.byName["capture"].words[0], "predicate": "is", "object": "named"}, "scope": a}, &rem)
		for _, e := range rem.Edges {
			for _, r := range f.records {
				if r.id == e.TargetID || r.id == e.SourceID {
					t.Errorf("a capture linked to fixture record %q", r.name)
				}
			}
		}
	})
}

// matrixRun is one caller's pass over the fixture.
type matrixRun struct {
	t      *testing.T
	f      *matrixFixture
	caller trustCaller
	c      *client
	admin  *client
}

// scan fails on any id or word of a record the caller may not see, and
// any word of one it sees redacted, in the whole of res (text, structured
// content, error meta), except the ids the probe named itself.
func (m *matrixRun) scan(what string, res *sdk.CallToolResult, named ...string) {
	m.t.Helper()
	b, _ := json.Marshal(res)
	doc := string(b)
	for _, r := range m.f.records {
		switch m.caller.sees(r) {
		case "none":
			if !slices.Contains(named, r.id) && strings.Contains(doc, r.id) {
				m.t.Errorf("%s: the id of invisible record %q leaks: %s", what, r.name, doc)
			}
			fallthrough
		case "redacted":
			for _, w := range r.words {
				if strings.Contains(doc, w) {
					m.t.Errorf("%s: the text of %s record %q leaks (%s): %s", what, m.caller.sees(r), r.name, w, doc)
				}
			}
		}
	}
}

// call calls tool and scans its answer.
func (m *matrixRun) call(tool string, args map[string]any, named ...string) *sdk.CallToolResult {
	m.t.Helper()
	res := m.c.call(tool, args)
	m.scan(fmt.Sprintf("%s %v", tool, args), res, named...)
	return res
}

// sameAsMissing calls tool with args naming id (an invisible record) at
// key, and with a fresh id there instead, and fails unless both answers
// are the same error, the id aside: no oracle of what exists.
func (m *matrixRun) sameAsMissing(tool string, args map[string]any, key, id string) {
	m.t.Helper()
	hidden := m.call(tool, args, id)
	missingID := membrane.NewID()
	other := map[string]any{}
	for k, v := range args {
		other[k] = v
	}
	other[key] = missingID
	missing := m.c.call(tool, other)
	h, mm := toolError(m.t, hidden), toolError(m.t, missing)
	if h.Code != mm.Code || strings.ReplaceAll(h.Text(), id, "ID") != strings.ReplaceAll(mm.Text(), missingID, "ID") {
		m.t.Errorf("%s on an invisible record: %q; on a missing one: %q", tool, h.Text(), mm.Text())
	}
}

func (m *matrixRun) reads() {
	t, f := m.t, m.f
	// One record at a time: get_record and lineage.
	for _, r := range f.records {
		want := m.caller.sees(r)
		res := m.call("get_record", map[string]any{"id": r.id}, r.id)
		switch want {
		case "none":
			m.sameAsMissing("get_record", map[string]any{"id": r.id}, "id", r.id)
			m.sameAsMissing("lineage", map[string]any{"id": r.id}, "id", r.id)
			m.sameAsMissing("get_record", map[string]any{"id": r.id, "as_of": "2100-01-01T00:00:00Z"}, "id", r.id)
			continue
		case "redacted":
			var got mcp.RecordDetail
			decodeResult(t, res, &got)
			if !got.Redacted || got.Payload != nil || got.Text != "" || len(got.Sources) > 0 {
				t.Errorf("%s: want it redacted, got %+v", r.name, got)
			}
		case "full":
			var got mcp.RecordDetail
			decodeResult(t, res, &got)
			if got.Redacted || !strings.Contains(got.Text, r.words[0]) {
				t.Errorf("%s: want it in full, got %+v", r.name, got)
			}
		}
		res = m.call("lineage", map[string]any{"id": r.id, "predicates": []string{"supersedes", "derived_from", "contested_by", "related_to"}}, r.id)
		if res.IsError {
			t.Errorf("lineage of %s (%s): %s", r.name, want, text(res))
		}
	}
	// The chain: a traversal stops at the hidden middle, and shows nothing
	// behind it.
	first, middle, last := f.byName["chain first"], f.byName["chain middle"], f.byName["chain last"]
	if m.caller.sees(middle) == "none" && m.caller.sees(last) != "none" {
		var lin mcp.LineageOutput
		decodeResult(t, m.call("lineage", map[string]any{"id": last.id}, last.id), &lin)
		if b, _ := json.Marshal(lin); strings.Contains(string(b), first.id) || lin.Current != last.id || len(lin.History) != 1 {
			t.Errorf("lineage of the chain's last past its hidden middle: %s", b)
		}
		decodeResult(t, m.call("lineage", map[string]any{"id": first.id, "direction": "descendants"}, first.id), &lin)
		if b, _ := json.Marshal(lin); strings.Contains(string(b), last.id) || lin.Current != first.id {
			t.Errorf("lineage of the chain's first past its hidden middle: %s", b)
		}
	}

	// Listings and searches over the whole fixture.
	var list mcp.ListRecordsOutput
	decodeResult(t, m.call("list_records", map[string]any{"tags": []string{f.tag}, "page_size": 100, "statuses": statusesAll()}), &list)
	m.checkListed("list_records", list.Records)
	for _, args := range []map[string]any{
		{"query": "zebrafact vault", "limit": 100, "include_retracted": true},
		{"query": "zebrafact guards vault", "limit": 100, "scope": f.a},
		{"query": "zebrafact", "limit": 100, "scopes": []string{f.b, f.a}, "types": []string{"semantic", "entity", "episodic"}},
		{"limit": 100, "tags": []string{f.tag}},
	} {
		var rec mcp.RecallOutput
		decodeResult(t, m.call("recall", args), &rec)
		var got []mcp.Record
		for _, h := range rec.Hits {
			got = append(got, mcp.Record{ID: h.ID, Redacted: h.Redacted, Text: h.Text})
		}
		m.checkListed(fmt.Sprintf("recall %v", args), got)
	}
	// Searching for the words of what the caller may not see finds none of it.
	for _, r := range f.records {
		if m.caller.sees(r) == "full" {
			continue
		}
		for _, w := range r.words {
			m.call("recall", map[string]any{"query": w, "include_retracted": true})
			m.call("list_records", map[string]any{"text": w, "statuses": statusesAll()})
		}
	}
}

func statusesAll() []string { return []string{"active", "contested", "retracted", "superseded"} }

// checkListed checks a listing of fixture records: none the caller may
// not see, redacted ones redacted, and, for a listing by tag, every one
// it sees.
func (m *matrixRun) checkListed(what string, got []mcp.Record) {
	m.t.Helper()
	for _, g := range got {
		for _, r := range m.f.records {
			if r.id != g.ID {
				continue
			}
			switch want := m.caller.sees(r); {
			case want == "none":
				m.t.Errorf("%s lists invisible record %q", what, r.name)
			case want == "redacted" && !g.Redacted, want == "full" && g.Redacted:
				m.t.Errorf("%s lists %q with redacted=%v, want %s", what, r.name, g.Redacted, want)
			}
		}
	}
	if what != "list_records" {
		return
	}
	for _, r := range m.f.records {
		if m.caller.sees(r) != "none" && !slices.ContainsFunc(got, func(g mcp.Record) bool { return g.ID == r.id }) &&
			!strings.HasPrefix(r.name, "capture") { // the capture's entity is not tagged
			m.t.Errorf("%s misses %q, which the caller sees (%s)", what, r.name, m.caller.sees(r))
		}
	}
}

// writes: every write naming a record the writer may not see answers as
// for a missing one, one it sees redacted is FORBIDDEN, and nothing is
// written that the writer may not write.
func (m *matrixRun) writes() {
	t, f := m.t, m.f
	before := m.snapshot()
	// The writer's own record, the source of its relations and contests.
	var own mcp.RememberOutput
	m.c.ok("remember", map[string]any{"content": "a scratch note", "scope": f.a}, &own)
	src := own.Record.ID
	for _, r := range f.records {
		switch m.caller.sees(r) {
		case "none":
			m.sameAsMissing("revise", map[string]any{"operation": "retract", "id": r.id}, "id", r.id)
			m.sameAsMissing("forget", map[string]any{"id": r.id}, "id", r.id)
			m.sameAsMissing("record_outcome", map[string]any{"record_id": r.id, "status": "success"}, "record_id", r.id)
			m.sameAsMissing("relate", map[string]any{"source_id": src, "predicate": "supports", "target_id": r.id}, "target_id", r.id)
			m.sameAsMissing("revise", map[string]any{"operation": "contest", "id": f.byName["low/a"].id, "contesting_ref": r.id}, "contesting_ref", r.id)
			m.sameAsMissing("revise", map[string]any{"operation": "supersede", "id": r.id, "record": map[string]any{"payload": map[string]any{
				"subject": "s", "predicate": "p", "object": "o", "evidence": []any{map[string]any{"source_type": "t", "source_id": "x"}}}}}, "id", r.id)
		case "redacted":
			for _, args := range []map[string]any{{"operation": "retract", "id": r.id}, {"operation": "contest", "id": f.byName["low/a"].id, "contesting_ref": r.id}} {
				res := m.call("revise", args, r.id)
				if te := toolError(t, res); te.Code != "FORBIDDEN" {
					t.Errorf("revise %v on a redacted record: %s", args, te.Text())
				}
			}
			res := m.call("relate", map[string]any{"source_id": src, "predicate": "supports", "target_id": r.id}, r.id)
			if te := toolError(t, res); te.Code != "FORBIDDEN" {
				t.Errorf("relate to a redacted record: %s", te.Text())
			}
		}
	}
	// Writes beyond the writer's trust.
	above := []string{"public", "low", "medium", "high", "hyper"}[m.caller.ceiling+1]
	for _, args := range []map[string]any{
		{"content": "above", "scope": f.a, "sensitivity": above},
		{"content": "elsewhere", "scope": f.b},
		{"content": "everywhere", "scope": "*"},
	} {
		if te := toolError(t, m.call("remember", args)); te.Code != "FORBIDDEN" {
			t.Errorf("remember %v: %s", args, te.Text())
		}
	}
	if te := toolError(t, m.call("forget", map[string]any{"id": src, "delete": true})); te.Code != "FORBIDDEN" {
		t.Errorf("a writer deletes: %s", te.Text())
	}
	// The fixture is as it was: no refused write changed a record.
	if after := m.snapshot(); after != before {
		t.Errorf("refused writes changed the fixture:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshot is every fixture record's status and version, as the admin
// reads them.
func (m *matrixRun) snapshot() string {
	var b strings.Builder
	for _, r := range m.f.records {
		var got mcp.RecordDetail
		m.admin.ok("get_record", map[string]any{"id": r.id}, &got)
		fmt.Fprintf(&b, "%s:%s:%d ", r.name, got.Status, got.Version)
	}
	return b.String()
}

// decodeResult decodes a successful result's structured content.
func decodeResult(t *testing.T, res *sdk.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error: %s", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}
