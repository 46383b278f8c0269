package membrane_test

// FuzzPayloadDecode feeds arbitrary bytes to DecodePayload (how every
// stored payload is read back) and what it accepts to everything that
// consumes a payload: validation on write, the derived text and Browser
// properties, the plan subgraph. Pure, no database. The seeds run as a
// normal test; to fuzz:
//
//	go test -run '^$' -fuzz FuzzPayloadDecode -fuzztime 60s ./internal/membrane/

import (
	"bytes"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

var payloadTypes = []membrane.MemoryType{membrane.TypeEpisodic, membrane.TypeWorking, membrane.TypeSemantic,
	membrane.TypeCompetence, membrane.TypePlanGraph, membrane.TypeEntity}

func FuzzPayloadDecode(f *testing.F) {
	deep := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	seeds := []struct {
		typ  int
		data string
	}{
		{0, `{"timeline": [{"t": "2026-11-21T12:00:00Z", "event_kind": "tool", "ref": "r1", "summary": "ran"}],
		      "tool_graph": [{"id": "a", "tool": "sh", "args": {"cmd": "ls"}, "result": [1, "x"], "depends_on": ["b"]},
		                     {"id": "b", "tool": "sh", "args": {}}],
		      "environment": {"os": "linux", "tool_versions": {"go": "1.26"}, "context": {}}, "outcome": "success"}`},
		{1, `{"thread_id": "t", "state": "executing", "active_constraints": [{"type": "a", "key": "k", "value": 1, "required": true}],
		      "next_actions": ["x"], "context_summary": "s"}`},
		{2, `{"subject": "auth", "predicate": "uses", "object": {"db": ["postgres", 15]},
		      "validity": {"mode": "timeboxed", "conditions": {}, "start": "2026-01-01T00:00:00Z", "end": "2027-01-01T00:00:00+01:00"},
		      "evidence": [{"source_type": "doc", "source_id": "d"}]}`},
		{3, `{"skill_name": "deploy", "triggers": [{"signal": "s", "conditions": {"a": 1}}],
		      "recipe": [{"step": "build", "tool": "go", "args_schema": {}}], "performance": {"success_count": 3, "failure_count": 1, "success_rate": 0.75}}`},
		{4, `{"plan_id": "p", "intent": "ship", "constraints": {}, "inputs_schema": {}, "outputs_schema": {},
		      "nodes": [{"id": "a", "op": "build", "params": {}, "guards": {}}, {"id": "b", "op": "test", "params": {"x": null}, "guards": {}}],
		      "edges": [{"from": "a", "to": "b", "kind": "control"}, {"from": "b", "to": "a", "kind": "data"}, {"from": "a", "to": "zz", "kind": "data"}],
		      "metrics": {"failure_rate": 0.1, "execution_count": 2}}`},
		{5, `{"canonical_name": "PostgreSQL", "primary_type": "tool", "aliases": [{"value": "pg"}, {"value": "postgres"}],
		      "identifiers": [{"namespace": "url", "value": "https://postgresql.org"}]}`},
		// Malformed and wrongly typed.
		{0, ``}, {1, `{`}, {2, `null`}, {3, `[]`}, {4, `"x"`}, {5, `{"canonical_name": 5}`},
		{0, `{"timeline": [{"t": "yesterday"}]}`},
		{0, `{"timeline": [{"t": "0000-01-01T00:00:00Z"}, {"t": "9999-12-31T23:59:59.999999999-23:59"}]}`},
		{1, `{"state": "exploding"}`},
		{2, `{"subject": "s", "predicate": "p", "object": 1e308}`},
		{2, `{"subject": "s", "predicate": "p", "object": 1e400}`},
		{2, `{"subject": "s", "predicate": "p", "object": NaN}`},
		{2, `{"subject": "s", "predicate": "p", "object": -0.0}`},
		{3, `{"skill_name": "s", "performance": {"success_count": 99999999999999999999, "success_rate": -1}}`},
		{3, `{"skill_name": "s", "performance": {"success_count": -9223372036854775808, "failure_count": 9223372036854775807}}`},
		{4, `{"plan_id": "p", "nodes": [{"id": "a"}, {"id": "a"}], "edges": [{"from": "a", "to": "a", "kind": "loop"}]}`},
		{4, `{"plan_id": "p", "nodes": [{"id": ""}], "edges": [{"from": "", "to": "", "kind": "data"}]}`},
		{5, `{"canonical_name": "", "aliases": [{"value": ""}]}`},
		// Duplicate keys, unknown fields, case-folded keys.
		{2, `{"subject": "a", "subject": "b", "SUBJECT": "c", "predicate": "p", "extra": {"x": 1}}`},
		// Deep nesting in the free-form JSON.
		{2, `{"subject": "s", "predicate": "p", "object": ` + deep(`[`, `1`, `]`, 10_000) + `}`},
		{2, `{"subject": "s", "predicate": "p", "object": ` + deep(`{"a": `, `1`, `}`, 9_000) + `}`},
		{4, `{"plan_id": "p", "nodes": [{"id": "a", "op": "o", "params": ` + deep(`{"a": `, `1`, `}`, 200) + `, "guards": {}}]}`},
		// Unicode edge cases.
		{2, `{"subject": "\ud800", "predicate": "\udfff\ud800", "object": "a\u0000b"}`},
		{5, `{"canonical_name": "\u202eevil\u202c", "aliases": [{"value": "e` + strings.Repeat("\u0301", 1000) + `"}]}`},
		{2, "{\"subject\": \"\xff\xfe\", \"predicate\": \"\xed\xa0\x80\", \"object\": \"\xc0\xaf\"}"},
		{5, `{"canonical_name": "😀` + "\U0010FFFF" + `\ufeff"}`},
		// Huge strings.
		{2, `{"subject": "` + strings.Repeat("s", 200_000) + `", "predicate": "p"}`},
	}
	for _, s := range seeds {
		f.Add(uint8(s.typ), []byte(s.data))
	}
	policy := membrane.DefaultPolicy()
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		mt := payloadTypes[int(typ)%len(payloadTypes)]
		p, err := membrane.DecodePayload(mt, data)
		if err != nil {
			return
		}
		if p.Kind() != mt {
			t.Fatalf("decoded a %s payload as %s", mt, p.Kind())
		}
		// Everything that reads a stored payload must cope with it.
		rec := &membrane.Record{ID: "r", Type: mt, Payload: p, Status: membrane.StatusActive}
		_ = membrane.SearchText(p)
		_ = membrane.DisplayName(rec)
		_ = membrane.BrowserFields(p)
		if mt == membrane.TypePlanGraph {
			_, _, _ = membrane.PlanSubgraph(rec)
		}
		// Encoding what was decoded succeeds and is stable: a payload
		// read back and written again does not drift.
		b1, err := membrane.EncodePayload(p)
		if err != nil {
			t.Fatalf("re-encode %s payload decoded from %.200q: %v", mt, data, err)
		}
		p2, err := membrane.DecodePayload(mt, b1)
		if err != nil {
			t.Fatalf("decode %s payload we encoded, %.200q: %v", mt, b1, err)
		}
		b2, err := membrane.EncodePayload(p2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("round trip drifts: %.200q then %.200q (%v)", b1, b2, err)
		}
		// Validation on write must answer (accept, or reject as bad input),
		// never panic nor fail otherwise.
		var in membrane.PayloadInput
		switch v := p.(type) {
		case *membrane.EpisodicPayload:
			in.Episodic = v
		case *membrane.WorkingPayload:
			in.Working = v
		case *membrane.SemanticPayload:
			in.Semantic = v
		case *membrane.CompetencePayload:
			in.Competence = v
		case *membrane.PlanGraphPayload:
			in.PlanGraph = v
		case *membrane.EntityPayload:
			in.Entity = v
		}
		r, err := policy.BuildRecord(membrane.RecordInput{Type: mt, Payload: in}, now)
		if err != nil {
			if code := membrane.ErrorCode(err); code != membrane.EINVALID {
				t.Fatalf("BuildRecord: %s, want %s: %v", code, membrane.EINVALID, err)
			}
			return
		}
		if mt == membrane.TypePlanGraph {
			if _, _, err := membrane.PlanSubgraph(r); err != nil && membrane.ErrorCode(err) != membrane.EINVALID {
				t.Fatalf("PlanSubgraph of a valid record: %v", err)
			}
		}
	})
}
