package membrane_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func semanticInput() membrane.RecordInput {
	return membrane.RecordInput{
		Type:    membrane.TypeSemantic,
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "db", Predicate: "is", Object: "postgres"}},
	}
}

func TestBuildRecordDefaults(t *testing.T) {
	p := membrane.DefaultPolicy()
	p.DefaultSensitivity = membrane.SensitivityMedium
	tests := []struct {
		typ      membrane.MemoryType
		payload  membrane.PayloadInput
		halfLife int64
		policy   membrane.DeletionPolicy
	}{
		{membrane.TypeEpisodic, membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{}}, 3600, membrane.DeleteAutoPrune},
		{membrane.TypeWorking, membrane.PayloadInput{Working: &membrane.WorkingPayload{ThreadID: "t", State: membrane.TaskDone}}, 86400, membrane.DeleteAutoPrune},
		{membrane.TypeSemantic, semanticInput().Payload, 30 * 86400, membrane.DeleteAutoPrune},
		{membrane.TypeCompetence, membrane.PayloadInput{Competence: &membrane.CompetencePayload{SkillName: "s"}}, 30 * 86400, membrane.DeleteAutoPrune},
		{membrane.TypePlanGraph, membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "p"}}, 30 * 86400, membrane.DeleteAutoPrune},
		{membrane.TypeEntity, membrane.PayloadInput{Entity: &membrane.EntityPayload{CanonicalName: "Ada"}}, 30 * 86400, membrane.DeleteManualOnly},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			r, err := p.BuildRecord(membrane.RecordInput{Type: tt.typ, Payload: tt.payload}, now)
			if err != nil {
				t.Fatal(err)
			}
			if r.ID == "" || r.Version != 1 || r.Status != membrane.StatusActive {
				t.Fatalf("id=%q version=%d status=%s", r.ID, r.Version, r.Status)
			}
			if r.Sensitivity != membrane.SensitivityMedium {
				t.Fatalf("sensitivity = %s, want the policy default", r.Sensitivity)
			}
			if r.Confidence != 1 || r.Salience != 1 {
				t.Fatalf("confidence=%v salience=%v", r.Confidence, r.Salience)
			}
			lc := r.Lifecycle
			if lc.HalfLifeSeconds != tt.halfLife || lc.DeletionPolicy != tt.policy || lc.Curve != membrane.DecayExponential {
				t.Fatalf("lifecycle = %+v", lc)
			}
			if lc.ReinforcementGain != 0.1 {
				t.Fatalf("reinforcement gain = %v, want 0.1 (the reference's 0 made reinforce a no-op)", lc.ReinforcementGain)
			}
			if !lc.LastReinforcedAt.Equal(now) || !r.CreatedAt.Equal(now) || !r.UpdatedAt.Equal(now) {
				t.Fatalf("times not set to now: %+v", r)
			}
		})
	}
}

func TestBuildRecordOverrides(t *testing.T) {
	in := semanticInput()
	in.ID = new("fact-1")
	in.Sensitivity = new(membrane.SensitivityHigh)
	in.Confidence = new(0.25)
	in.Salience = new(3.5)
	in.Scope = new("project:x")
	in.Tags = []string{"a", "b", "a"}
	in.Lifecycle = &membrane.LifecycleInput{HalfLifeSeconds: new(int64(60)), MinSalience: new(0.2), MaxAgeSeconds: new(int64(7)),
		ReinforcementGain: new(0.5), Pinned: new(true), DeletionPolicy: new(membrane.DeleteNever), Curve: new(membrane.DecayLinear)}
	in.Provenance = &membrane.ProvenanceInput{Sources: []membrane.ProvenanceSource{{Kind: membrane.ProvenanceArtifact, Ref: "file.txt"}}, CreatedBy: new("me")}
	r, err := membrane.DefaultPolicy().BuildRecord(in, now)
	if err != nil {
		t.Fatal(err)
	}
	want := membrane.Lifecycle{Curve: membrane.DecayLinear, HalfLifeSeconds: 60, MinSalience: 0.2, MaxAgeSeconds: 7,
		ReinforcementGain: 0.5, LastReinforcedAt: now, BaseSalience: 3.5, Pinned: true, DeletionPolicy: membrane.DeleteNever}
	if r.Lifecycle != want {
		t.Fatalf("lifecycle = %+v, want %+v", r.Lifecycle, want)
	}
	if r.ID != "fact-1" || r.Sensitivity != membrane.SensitivityHigh || r.Confidence != 0.25 || r.Salience != 3.5 || r.Scope != "project:x" {
		t.Fatalf("record = %+v", r)
	}
	if got := strings.Join(r.Tags, ","); got != "a,b" {
		t.Fatalf("tags = %s, want duplicates dropped", got)
	}
	if r.Provenance.CreatedBy != "me" || len(r.Provenance.Sources) != 1 {
		t.Fatalf("provenance = %+v", r.Provenance)
	}
}

func TestBuildRecordValidation(t *testing.T) {
	long := strings.Repeat("x", membrane.MaxStringBytes+1)
	manyTags := make([]string, membrane.MaxTags+1)
	for i := range manyTags {
		manyTags[i] = "t" + strings.Repeat("x", i)
	}
	tests := []struct {
		name  string
		edit  func(*membrane.RecordInput)
		field string
	}{
		{"no payload", func(in *membrane.RecordInput) { in.Payload = membrane.PayloadInput{} }, "payload"},
		{"two payloads", func(in *membrane.RecordInput) {
			in.Payload.Entity = &membrane.EntityPayload{CanonicalName: "x"}
		}, "payload"},
		{"payload of another type", func(in *membrane.RecordInput) { in.Type = membrane.TypeEpisodic }, "payload"},
		{"unknown type", func(in *membrane.RecordInput) { in.Type = "diary" }, "type"},
		{"bad sensitivity", func(in *membrane.RecordInput) { in.Sensitivity = new(membrane.Sensitivity("secret")) }, "sensitivity"},
		{"confidence above 1", func(in *membrane.RecordInput) { in.Confidence = new(1.5) }, "confidence"},
		{"confidence NaN", func(in *membrane.RecordInput) { in.Confidence = new(math.NaN()) }, "confidence"},
		{"negative salience", func(in *membrane.RecordInput) { in.Salience = new(-0.1) }, "salience"},
		{"infinite salience", func(in *membrane.RecordInput) { in.Salience = new(math.Inf(1)) }, "salience"},
		{"zero half-life", func(in *membrane.RecordInput) {
			in.Lifecycle = &membrane.LifecycleInput{HalfLifeSeconds: new(int64(0))}
		}, "lifecycle.halfLifeSeconds"},
		{"min salience above 1", func(in *membrane.RecordInput) { in.Lifecycle = &membrane.LifecycleInput{MinSalience: new(2.0)} }, "lifecycle.minSalience"},
		{"negative max age", func(in *membrane.RecordInput) {
			in.Lifecycle = &membrane.LifecycleInput{MaxAgeSeconds: new(int64(-1))}
		}, "lifecycle.maxAgeSeconds"},
		{"too many tags", func(in *membrane.RecordInput) { in.Tags = manyTags }, "tags"},
		{"long tag", func(in *membrane.RecordInput) { in.Tags = []string{strings.Repeat("t", 257)} }, "tags[0]"},
		{"empty tag", func(in *membrane.RecordInput) { in.Tags = []string{""} }, "tags[0]"},
		{"long scope", func(in *membrane.RecordInput) { in.Scope = &long }, "scope"},
		{"long subject", func(in *membrane.RecordInput) { in.Payload.Semantic.Subject = long }, "payload.subject"},
		{"missing predicate", func(in *membrane.RecordInput) { in.Payload.Semantic.Predicate = "" }, "payload.predicate"},
		{"long string deep in object", func(in *membrane.RecordInput) {
			in.Payload.Semantic.Object = map[string]any{"a": []any{long}}
		}, "payload.object.a[0]"},
		{"number overflowing float64", func(in *membrane.RecordInput) {
			in.Payload.Semantic.Object = json.Number("1e400")
		}, "payload.object"},
		{"provenance without ref", func(in *membrane.RecordInput) {
			in.Provenance = &membrane.ProvenanceInput{Sources: []membrane.ProvenanceSource{{Kind: membrane.ProvenanceEvent}}}
		}, "provenance.sources[0].ref"},
		{"empty id", func(in *membrane.RecordInput) { in.ID = new("") }, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := semanticInput()
			tt.edit(&in)
			_, err := membrane.DefaultPolicy().BuildRecord(in, now)
			if code := membrane.ErrorCode(err); code != membrane.EINVALID {
				t.Fatalf("code = %q (err %v), want %s", code, err, membrane.EINVALID)
			}
			found := false
			for _, f := range membrane.ErrorFields(err) {
				found = found || f.Field == tt.field
			}
			if !found {
				t.Fatalf("fields = %+v, want one for %s", membrane.ErrorFields(err), tt.field)
			}
		})
	}
}

func TestBuildRecordPayloadRules(t *testing.T) {
	p := membrane.DefaultPolicy()
	tests := []struct {
		name    string
		in      membrane.RecordInput
		field   string
		wantErr bool
	}{
		{"working needs a known state", membrane.RecordInput{Type: membrane.TypeWorking,
			Payload: membrane.PayloadInput{Working: &membrane.WorkingPayload{ThreadID: "t", State: "sleeping"}}}, "payload.state", true},
		{"plan edges name nodes", membrane.RecordInput{Type: membrane.TypePlanGraph,
			Payload: membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "p",
				Nodes: []membrane.PlanNode{{ID: "a", Op: "x"}}, Edges: []membrane.PlanEdge{{From: "a", To: "b", Kind: membrane.EdgeData}}}}},
			"payload.edges[0].to", true},
		{"plan node ids unique", membrane.RecordInput{Type: membrane.TypePlanGraph,
			Payload: membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "p",
				Nodes: []membrane.PlanNode{{ID: "a", Op: "x"}, {ID: "a", Op: "y"}}}}}, "payload.nodes[1].id", true},
		{"tool node ids unique", membrane.RecordInput{Type: membrane.TypeEpisodic,
			Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{ToolGraph: []membrane.ToolNode{{ID: "1", Tool: "a"}, {ID: "1", Tool: "b"}}}}},
			"payload.toolGraph[1].id", true},
		{"competence rate in [0,1]", membrane.RecordInput{Type: membrane.TypeCompetence,
			Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{SkillName: "s", Performance: &membrane.PerformanceStats{SuccessRate: 2}}}},
			"payload.performance.successRate", true},
		{"validity window ordered", membrane.RecordInput{Type: membrane.TypeSemantic,
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "s", Predicate: "p",
				Validity: &membrane.Validity{Mode: membrane.ValidityTimeboxed, Start: new(now), End: new(now.Add(-time.Hour))}}}},
			"payload.validity.end", true},
		{"entity needs a name", membrane.RecordInput{Type: membrane.TypeEntity,
			Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{}}}, "payload.canonicalName", true},
		{"entity type defaults to Other", membrane.RecordInput{Type: membrane.TypeEntity,
			Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{CanonicalName: "Ada"}}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := p.BuildRecord(tt.in, now)
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if e := r.Payload.(*membrane.EntityPayload); e.PrimaryType != "Other" {
					t.Fatalf("primary type = %q", e.PrimaryType)
				}
				return
			}
			fields := membrane.ErrorFields(err)
			if len(fields) == 0 || fields[0].Field != tt.field {
				t.Fatalf("err = %v fields = %+v, want field %s", err, fields, tt.field)
			}
		})
	}
}

func TestIngestBuilders(t *testing.T) {
	p := membrane.DefaultPolicy()
	ts := now.Add(-time.Minute)
	meta := membrane.IngestMeta{Source: "agent-7", Timestamp: &ts, Tags: []string{"x"}}
	t.Run("event", func(t *testing.T) {
		got, err := p.BuildEvent(membrane.IngestEvent{IngestMeta: meta, EventKind: "user_input", Ref: "msg-1", Summary: new("hello"), SessionID: new("conv-3")}, now)
		if err != nil {
			t.Fatal(err)
		}
		r := got.Record
		ep := r.Payload.(*membrane.EpisodicPayload)
		if r.Type != membrane.TypeEpisodic || r.Confidence != 0.8 || r.Lifecycle.HalfLifeSeconds != 3600 {
			t.Fatalf("record = %+v", r)
		}
		if len(ep.Timeline) != 1 || ep.Timeline[0].Ref != "msg-1" || !ep.Timeline[0].T.Equal(ts) || ep.Timeline[0].Summary != "hello" {
			t.Fatalf("timeline = %+v", ep.Timeline)
		}
		if ep.SessionID != "conv-3" {
			t.Fatalf("session = %q, want conv-3", ep.SessionID)
		}
		src := r.Provenance.Sources[0]
		if src.Kind != membrane.ProvenanceEvent || src.Ref != "msg-1" || src.CreatedBy != "agent-7" || r.Provenance.CreatedBy != membrane.IngestActor {
			t.Fatalf("provenance = %+v", r.Provenance)
		}
		if got.Audit.Action != membrane.AuditCreate || got.Audit.RecordID != r.ID || got.Audit.Actor != "agent-7" {
			t.Fatalf("audit = %+v", got.Audit)
		}
		if !r.CreatedAt.Equal(now) {
			t.Fatalf("created = %v, want the server time, not the event time", r.CreatedAt)
		}
	})
	t.Run("tool output", func(t *testing.T) {
		got, err := p.BuildToolOutput(membrane.IngestToolOutput{IngestMeta: meta, ToolName: "bash", Args: map[string]any{"cmd": "ls"}, Result: "ok"}, now)
		if err != nil {
			t.Fatal(err)
		}
		ep := got.Record.Payload.(*membrane.EpisodicPayload)
		if got.Record.Confidence != 0.9 || len(ep.ToolGraph) != 1 || ep.ToolGraph[0].Tool != "bash" || ep.Timeline[0].Summary != "tool_call: bash" {
			t.Fatalf("payload = %+v", ep)
		}
	})
	t.Run("observation", func(t *testing.T) {
		got, err := p.BuildObservation(membrane.IngestObservation{IngestMeta: meta, Subject: "svc", Predicate: "uses", Object: "pg"}, now)
		if err != nil {
			t.Fatal(err)
		}
		sp := got.Record.Payload.(*membrane.SemanticPayload)
		if got.Record.Type != membrane.TypeSemantic || got.Record.Confidence != 0.7 || got.Record.Lifecycle.HalfLifeSeconds != 30*86400 {
			t.Fatalf("record = %+v", got.Record)
		}
		if sp.Validity.Mode != membrane.ValidityGlobal || sp.RevisionPolicy != "replace" || len(sp.Evidence) != 1 {
			t.Fatalf("payload = %+v", sp)
		}
	})
	t.Run("working state", func(t *testing.T) {
		got, err := p.BuildWorkingState(membrane.IngestWorkingState{IngestMeta: meta, ThreadID: "th", State: membrane.TaskBlocked, NextActions: []string{"ask"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if got.Record.Type != membrane.TypeWorking || got.Record.Confidence != 1 {
			t.Fatalf("record = %+v", got.Record)
		}
	})
	t.Run("missing fields", func(t *testing.T) {
		_, err := p.BuildEvent(membrane.IngestEvent{}, now)
		fields := map[string]bool{}
		for _, f := range membrane.ErrorFields(err) {
			fields[f.Field] = true
		}
		if !fields["source"] || !fields["eventKind"] || !fields["ref"] {
			t.Fatalf("fields = %v", fields)
		}
	})
}

func TestApplyOutcome(t *testing.T) {
	p := membrane.DefaultPolicy()
	ev, err := p.BuildEvent(membrane.IngestEvent{IngestMeta: membrane.IngestMeta{Source: "a"}, EventKind: "k", Ref: "r"}, now)
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	next, audit, err := membrane.ApplyOutcome(ev.Record, membrane.IngestOutcome{Source: "judge", TargetRecordID: ev.Record.ID, OutcomeStatus: membrane.OutcomeSuccess}, later)
	if err != nil {
		t.Fatal(err)
	}
	if o := next.Payload.(*membrane.EpisodicPayload).Outcome; o == nil || *o != membrane.OutcomeSuccess {
		t.Fatalf("outcome = %v", o)
	}
	if ev.Record.Payload.(*membrane.EpisodicPayload).Outcome != nil {
		t.Fatal("ApplyOutcome changed its input")
	}
	if next.Version != 2 || !next.UpdatedAt.Equal(later) || len(next.Provenance.Sources) != 2 {
		t.Fatalf("next = %+v", next)
	}
	if audit.Action != membrane.AuditOutcome || audit.Previous["outcome"] != nil {
		t.Fatalf("audit = %+v", audit)
	}
	sem, _ := p.BuildObservation(membrane.IngestObservation{IngestMeta: membrane.IngestMeta{Source: "a"}, Subject: "s", Predicate: "p"}, now)
	if _, _, err := membrane.ApplyOutcome(sem.Record, membrane.IngestOutcome{OutcomeStatus: membrane.OutcomeFailure}, later); membrane.ErrorCode(err) != membrane.EPRECONDITION {
		t.Fatalf("outcome on a semantic record: err = %v", err)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	c := membrane.Cursor{Key: 0.5, ID: "abc", Field: "salience"}
	got, err := membrane.DecodeCursor(c.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != 0.5 || got.ID != "abc" || got.Field != "salience" {
		t.Fatalf("cursor = %+v", got)
	}
	for _, bad := range []string{"!!", "e30", strings.Repeat("A", 2000)} {
		if _, err := membrane.DecodeCursor(bad); membrane.ErrorCode(err) != membrane.EINVALID {
			t.Fatalf("DecodeCursor(%q) err = %v", bad, err)
		}
	}
}

func TestNewPage(t *testing.T) {
	tests := []struct {
		first   *int64
		want    int
		wantErr bool
	}{
		{nil, membrane.DefaultPageSize, false},
		{new(int64(0)), 0, false},
		{new(int64(500)), 500, false},
		{new(int64(501)), 0, true},
		{new(int64(-1)), 0, true},
	}
	for _, tt := range tests {
		p, err := membrane.NewPage(tt.first, nil)
		if (err != nil) != tt.wantErr || (!tt.wantErr && p.First != tt.want) {
			t.Fatalf("NewPage(%v) = %+v, %v", tt.first, p, err)
		}
	}
}

func TestPenalizeAmount(t *testing.T) {
	p := membrane.DefaultPolicy()
	r, err := p.BuildRecord(semanticInput(), now)
	if err != nil {
		t.Fatal(err)
	}
	meta := membrane.RevisionMeta{Actor: "a"}
	for _, amount := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		if _, err := membrane.Penalize(r, amount, meta, now); membrane.ErrorCode(err) != membrane.EINVALID {
			t.Fatalf("Penalize(%v) err = %v, want %s", amount, err, membrane.EINVALID)
		}
	}
	c, err := membrane.Penalize(r, 0, meta, now)
	if err != nil || c.Result.Salience != 1 {
		t.Fatalf("Penalize(0) = %+v, %v", c, err)
	}
}

// An enum field with an unknown value is refused with a message naming
// every value the type has, and only those: the message and Valid read
// one list.
func TestUnknownEnumValueNamesEveryValue(t *testing.T) {
	p := membrane.DefaultPolicy()
	now := time.Now()
	build := func(in membrane.RecordInput) error {
		_, err := p.BuildRecord(in, now)
		return err
	}
	semantic := func(v *membrane.Validity) membrane.PayloadInput {
		return membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "s", Predicate: "p", Validity: v}}
	}
	for _, tc := range []struct {
		name, field, want string
		err               error
	}{
		{"sensitivity", "sensitivity", "public, low, medium, high, hyper", build(membrane.RecordInput{Type: membrane.TypeSemantic,
			Sensitivity: new(membrane.Sensitivity("secret")), Payload: semantic(nil)})},
		{"task state", "payload.state", "planning, executing, blocked, waiting, done", build(membrane.RecordInput{Type: membrane.TypeWorking,
			Payload: membrane.PayloadInput{Working: &membrane.WorkingPayload{ThreadID: "t", State: "sleeping"}}})},
		{"validity mode", "payload.validity.mode", "global, conditional, timeboxed", build(membrane.RecordInput{Type: membrane.TypeSemantic,
			Payload: semantic(&membrane.Validity{Mode: "sometimes"})})},
		{"plan edge kind", "payload.edges[0].kind", "data, control", build(membrane.RecordInput{Type: membrane.TypePlanGraph,
			Payload: membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{PlanID: "p",
				Nodes: []membrane.PlanNode{{ID: "a", Op: "x"}}, Edges: []membrane.PlanEdge{{From: "a", To: "a", Kind: "maybe"}}}}})},
		{"episode outcome", "payload.outcome", "success, failure, partial", build(membrane.RecordInput{Type: membrane.TypeEpisodic,
			Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{Outcome: new(membrane.OutcomeStatus("won"))}}})},
		{"outcome input", "outcomeStatus", "success, failure, partial", membrane.ValidateOutcome(membrane.IngestOutcome{
			Source: "s", TargetRecordID: "r", OutcomeStatus: "won"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range membrane.ErrorFields(tc.err) {
				if f.Field == tc.field {
					if want := "must be one of: " + tc.want; f.Message != want {
						t.Fatalf("%s: %q, want %q", f.Field, f.Message, want)
					}
					return
				}
			}
			t.Fatalf("err %v: no error for %s", tc.err, tc.field)
		})
	}
}

// Sensitivity levels rank the five sensitivities from public (0) to hyper
// (4); an unknown one has none (-1) and is not valid.
func TestSensitivityLevels(t *testing.T) {
	for _, tc := range []struct {
		s    membrane.Sensitivity
		want int
	}{
		{membrane.SensitivityPublic, 0}, {membrane.SensitivityLow, 1}, {membrane.SensitivityMedium, 2},
		{membrane.SensitivityHigh, 3}, {membrane.SensitivityHyper, 4}, {"secret", -1}, {"", -1},
	} {
		if got := tc.s.Level(); got != tc.want || tc.s.Valid() != (tc.want >= 0) {
			t.Errorf("%q: level %d, valid %v; want %d", tc.s, got, tc.s.Valid(), tc.want)
		}
	}
}
