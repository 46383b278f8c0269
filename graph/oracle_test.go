package graph_test

import (
	"encoding/json"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestMetricsCountOnlyWhatTheCallerCanList compares a LOW reader's metrics
// with what it can list through records and auditLog, over records written
// at every level (MEDIUM is redacted for it, HIGH and HYPER invisible),
// each pinned, reinforced, and a competence and a plan with behavioural
// figures: every count and mean must be the listed one.
func TestMetricsCountOnlyWhatTheCallerCanList(t *testing.T) {
	scope := neo4jtest.Scope(t)
	rd := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	c := newClientWith(t, func(w *gqltest.Wiring) { w.Stores.Metrics = w.DB }, rd)
	reader := c.as(rd.Actor)
	for i, s := range []string{"PUBLIC", "LOW", "MEDIUM", "HIGH", "HYPER"} {
		extra := map[string]any{"sensitivity": s, "lifecycle": map[string]any{"pinned": true}}
		ids := []string{
			c.Create(scope, "SEMANTIC", gqltest.Fact(s), extra),
			c.Create(scope, "COMPETENCE", map[string]any{"competence": map[string]any{"skillName": s,
				"performance": map[string]any{"successCount": i, "failureCount": 1, "successRate": float64(i) / float64(i+1)}}}, extra),
			c.Create(scope, "PLAN_GRAPH", map[string]any{"planGraph": map[string]any{"planId": s,
				"metrics": map[string]any{"executionCount": 10 * (i + 1), "failureRate": 0}}}, extra),
		}
		for _, id := range ids {
			c.Do(`mutation($id: ID!) { reinforce(id: $id) { id } }`, map[string]any{"id": id}, nil)
		}
		c.Do(`mutation($id: ID!) { retract(id: $id, rationale: "r") { id } }`, map[string]any{"id": ids[0]}, nil)
	}

	var listed struct {
		Records struct {
			Nodes []struct {
				Redacted  bool
				Lifecycle *struct{ Pinned bool }
				Payload   *struct {
					Performance *struct{ SuccessRate float64 }
					Metrics     *struct{ ExecutionCount float64 }
				}
				AuditLog struct{ Nodes []struct{ Action string } }
			}
		}
	}
	reader.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 100) { nodes { redacted lifecycle { pinned }
	  payload { ... on CompetencePayload { performance { successRate } } ... on PlanGraphPayload { metrics { executionCount } } }
	  auditLog(first: 100) { nodes { action } } } } }`, map[string]any{"s": []any{scope}}, &listed)
	var total, redacted, pinned, audits int
	var rates, execs []float64
	byAction := map[string]int{}
	for _, n := range listed.Records.Nodes {
		total++
		if n.Redacted {
			redacted++
		}
		if n.Lifecycle != nil && n.Lifecycle.Pinned {
			pinned++
		}
		if n.Payload != nil && n.Payload.Performance != nil {
			rates = append(rates, n.Payload.Performance.SuccessRate)
		}
		if n.Payload != nil && n.Payload.Metrics != nil {
			execs = append(execs, n.Payload.Metrics.ExecutionCount)
		}
		for _, a := range n.AuditLog.Nodes {
			audits++
			byAction[a.Action]++
		}
	}
	if total != 9 || redacted != 3 {
		t.Fatalf("listed %d records, %d redacted: want 9 and 3 (public, low, medium)", total, redacted)
	}

	var got struct {
		Metrics struct {
			TotalRecords, RedactedRecords, PinnedRecords, AuditEntries int
			AuditByAction                                              []struct {
				Action string
				Count  int
			}
			CompetenceSuccessRate, PlanReuseFrequency, RetrievalUsefulness, RevisionRate float64
		}
	}
	reader.Do(`query($s: [String!]) { metrics(scopes: $s) { totalRecords redactedRecords pinnedRecords auditEntries auditByAction { action count }
	  competenceSuccessRate planReuseFrequency retrievalUsefulness revisionRate } }`, map[string]any{"s": []any{scope}}, &got)
	m := got.Metrics
	gotByAction := map[string]int{}
	for _, a := range m.AuditByAction {
		gotByAction[a.Action] = a.Count
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"totalRecords", float64(m.TotalRecords), float64(total)},
		{"redactedRecords", float64(m.RedactedRecords), float64(redacted)},
		{"pinnedRecords", float64(m.PinnedRecords), float64(pinned)},
		{"auditEntries", float64(m.AuditEntries), float64(audits)},
		{"competenceSuccessRate", m.CompetenceSuccessRate, mean(rates)},
		{"planReuseFrequency", m.PlanReuseFrequency, mean(execs)},
		{"retrievalUsefulness", m.RetrievalUsefulness, float64(byAction["REINFORCE"]) / float64(audits)},
		{"revisionRate", m.RevisionRate, float64(byAction["RETRACT"]) / float64(audits)},
	}
	for _, ch := range checks {
		if math.Abs(ch.got-ch.want) > 1e-9 {
			t.Errorf("%s = %v, but the reader can list %v", ch.name, ch.got, ch.want)
		}
	}
	if !maps.Equal(gotByAction, byAction) {
		b, _ := json.Marshal(gotByAction)
		t.Errorf("auditByAction = %s, listed %v", b, byAction)
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestTakenIDsAnswerAlike: a client-chosen id answers the same CONFLICT
// on every create path whether a record the caller sees has it, one in
// another scope, one above its ceiling (redacted or invisible), a deleted
// record, or the caller's own earlier request with other content; nothing
// is written; and a fresh id succeeds.
func TestTakenIDsAnswerAlike(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	wr := membrane.Principal{Actor: "writer-" + membrane.NewID(), Role: membrane.RoleWriter, MaxSensitivity: membrane.SensitivityMedium, Scopes: []string{scope}}
	c := newClientWith(t, func(w *gqltest.Wiring) { w.Stores.Deletes = w.DB }, wr)
	w := c.as(wr.Actor)
	deleted := c.Create(scope, "SEMANTIC", gqltest.Fact("deleted"), nil)
	c.Do(`mutation($id: ID!) { deleteRecord(id: $id) { id } }`, map[string]any{"id": deleted}, nil)
	own := membrane.NewID()
	w.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": withID(factInput(scope, "own"), own)}, nil)
	taken := map[string]string{
		"visible":            c.Create(scope, "SEMANTIC", gqltest.Fact("visible"), nil),
		"other scope":        c.Create(other, "SEMANTIC", gqltest.Fact("other"), nil),
		"redacted":           c.Create(scope, "SEMANTIC", gqltest.Fact("high"), map[string]any{"sensitivity": "HIGH"}),
		"invisible":          c.Create(scope, "SEMANTIC", gqltest.Fact("hyper"), map[string]any{"sensitivity": "HYPER"}),
		"deleted":            deleted,
		"own, other request": own,
	}
	src1 := w.Create(scope, "SEMANTIC", gqltest.Fact("source one"), nil)
	src2 := w.Create(scope, "SEMANTIC", gqltest.Fact("source two"), nil)
	paths := []struct {
		name, query string
		vars        func(in map[string]any) map[string]any
	}{
		{"createRecord", `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`,
			func(in map[string]any) map[string]any { return map[string]any{"in": in} }},
		{"ingestBatch", `mutation($in: RecordInput!) { ingestBatch(inputs: [$in]) { id } }`,
			func(in map[string]any) map[string]any { return map[string]any{"in": in} }},
		{"supersede", `mutation($in: RecordInput!, $old: ID!) { supersede(oldId: $old, newRecord: $in) { id } }`,
			func(in map[string]any) map[string]any { return map[string]any{"in": in, "old": src1} }},
		{"fork", `mutation($in: RecordInput!, $src: ID!) { fork(sourceId: $src, newRecord: $in) { id } }`,
			func(in map[string]any) map[string]any { return map[string]any{"in": in, "src": src1} }},
		{"merge", `mutation($in: RecordInput!, $ids: [ID!]!) { merge(ids: $ids, mergedRecord: $in) { id } }`,
			func(in map[string]any) map[string]any { return map[string]any{"in": in, "ids": []any{src1, src2}} }},
	}
	before := c.snapshot(scope)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			var first string
			for name, id := range taken {
				resp := w.Raw(p.query, p.vars(withID(factInput(scope, "new "+p.name), id)))
				if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "CONFLICT" {
					t.Fatalf("%s: want one CONFLICT, got %s %+v", name, resp.Data, resp.Errors)
				}
				b, _ := json.Marshal(resp.Errors)
				if strings.Contains(string(b), id) || strings.Contains(string(b), "exist") {
					t.Fatalf("%s: the answer names the id or says it exists: %s", name, b)
				}
				if first == "" {
					first = string(b)
				} else if string(b) != first {
					t.Fatalf("%s answers %s, another taken id %s", name, b, first)
				}
			}
			if got := c.snapshot(scope); got != before {
				t.Fatalf("a refused create changed the scope")
			}
		})
	}
	// A fresh id is created, on the path that answered CONFLICT above.
	fresh := membrane.NewID()
	var got struct{ CreateRecord struct{ ID string } }
	w.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": withID(factInput(scope, "fresh"), fresh)}, &got)
	if got.CreateRecord.ID != fresh {
		t.Fatalf("fresh id: created %q", got.CreateRecord.ID)
	}
}

func withID(in map[string]any, id string) map[string]any {
	in["id"] = id
	return in
}
