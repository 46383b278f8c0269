package membrane

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Payload is the type-specific content of a record. Exactly one concrete
// payload type exists per MemoryType, and Kind names it.
type Payload interface {
	Kind() MemoryType
}

// OutcomeStatus is how an experience ended.
type OutcomeStatus string

// Outcome statuses.
const (
	OutcomeSuccess OutcomeStatus = "success"
	OutcomeFailure OutcomeStatus = "failure"
	OutcomePartial OutcomeStatus = "partial"
)

var outcomeStatuses = enum[OutcomeStatus]{OutcomeSuccess, OutcomeFailure, OutcomePartial}

// Valid reports whether s is a known outcome.
func (s OutcomeStatus) Valid() bool { return outcomeStatuses.has(s) }

// TaskState is the state of a working-memory task.
type TaskState string

// Task states.
const (
	TaskPlanning  TaskState = "planning"
	TaskExecuting TaskState = "executing"
	TaskBlocked   TaskState = "blocked"
	TaskWaiting   TaskState = "waiting"
	TaskDone      TaskState = "done"
)

var taskStates = enum[TaskState]{TaskPlanning, TaskExecuting, TaskBlocked, TaskWaiting, TaskDone}

// Valid reports whether s is a known task state.
func (s TaskState) Valid() bool { return taskStates.has(s) }

// ValidityMode says when a semantic fact holds.
type ValidityMode string

// Validity modes.
const (
	ValidityGlobal      ValidityMode = "global"
	ValidityConditional ValidityMode = "conditional"
	ValidityTimeboxed   ValidityMode = "timeboxed"
)

var validityModes = enum[ValidityMode]{ValidityGlobal, ValidityConditional, ValidityTimeboxed}

// Valid reports whether m is a known mode.
func (m ValidityMode) Valid() bool { return validityModes.has(m) }

// EdgeKind is the kind of a plan-graph edge.
type EdgeKind string

// Plan edge kinds.
const (
	EdgeData    EdgeKind = "data"
	EdgeControl EdgeKind = "control"
)

var edgeKinds = enum[EdgeKind]{EdgeData, EdgeControl}

// Valid reports whether k is a known edge kind.
func (k EdgeKind) Valid() bool { return edgeKinds.has(k) }

// EpisodicPayload is raw experience: a timeline, tool calls, environment and outcome.
type EpisodicPayload struct {
	Timeline     []TimelineEvent      `json:"timeline,omitempty"`
	ToolGraph    []ToolNode           `json:"tool_graph,omitempty"`
	Environment  *EnvironmentSnapshot `json:"environment,omitempty"`
	Outcome      *OutcomeStatus       `json:"outcome,omitempty"`
	Artifacts    []string             `json:"artifacts,omitempty"`
	ToolGraphRef string               `json:"tool_graph_ref,omitempty"`
	// SessionID names the session (conversation, thread, run) the episode
	// belongs to: episodes of one session and scope are ordered by time
	// and linked into a chain, so retrieval finds a record through the
	// events next to it.
	SessionID string `json:"session_id,omitempty"`
}

// Kind implements Payload.
func (*EpisodicPayload) Kind() MemoryType { return TypeEpisodic }

// TimelineEvent is one event of an episode.
type TimelineEvent struct {
	T         time.Time `json:"t"`
	EventKind string    `json:"event_kind"`
	Ref       string    `json:"ref"`
	Summary   string    `json:"summary,omitempty"`
}

// ToolNode is one tool call of an episode.
type ToolNode struct {
	ID        string         `json:"id"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args"`
	Result    any            `json:"result,omitempty"`
	Timestamp *time.Time     `json:"timestamp,omitempty"`
	DependsOn []string       `json:"depends_on,omitempty"`
}

// EnvironmentSnapshot describes where an episode happened.
type EnvironmentSnapshot struct {
	OS               string         `json:"os,omitempty"`
	OSVersion        string         `json:"os_version,omitempty"`
	ToolVersions     map[string]any `json:"tool_versions"`
	WorkingDirectory string         `json:"working_directory,omitempty"`
	Context          map[string]any `json:"context"`
}

// WorkingPayload is the state of an ongoing task.
type WorkingPayload struct {
	ThreadID          string       `json:"thread_id"`
	State             TaskState    `json:"state"`
	ActiveConstraints []Constraint `json:"active_constraints,omitempty"`
	NextActions       []string     `json:"next_actions,omitempty"`
	OpenQuestions     []string     `json:"open_questions,omitempty"`
	ContextSummary    string       `json:"context_summary,omitempty"`
}

// Kind implements Payload.
func (*WorkingPayload) Kind() MemoryType { return TypeWorking }

// Constraint is an active constraint of a working task.
type Constraint struct {
	Type     string `json:"type"`
	Key      string `json:"key"`
	Value    any    `json:"value,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// SemanticPayload is a fact: subject, predicate, object, with validity and evidence.
// Revision state (active/contested/retracted, supersedes) lives on the record
// and its lineage edges, not in the payload.
type SemanticPayload struct {
	Subject        string        `json:"subject"`
	Predicate      string        `json:"predicate"`
	Object         any           `json:"object"`
	Validity       *Validity     `json:"validity,omitempty"`
	Evidence       []EvidenceRef `json:"evidence,omitempty"`
	RevisionPolicy string        `json:"revision_policy,omitempty"`
}

// Kind implements Payload.
func (*SemanticPayload) Kind() MemoryType { return TypeSemantic }

// Validity says when a fact holds.
type Validity struct {
	Mode       ValidityMode   `json:"mode"`
	Conditions map[string]any `json:"conditions"`
	Start      *time.Time     `json:"start,omitempty"`
	End        *time.Time     `json:"end,omitempty"`
}

// EvidenceRef points at evidence for a fact.
type EvidenceRef struct {
	SourceType string     `json:"source_type"`
	SourceID   string     `json:"source_id"`
	Timestamp  *time.Time `json:"timestamp,omitempty"`
}

// CompetencePayload is procedural knowledge: how to achieve a goal.
type CompetencePayload struct {
	SkillName     string            `json:"skill_name"`
	Triggers      []Trigger         `json:"triggers,omitempty"`
	Recipe        []RecipeStep      `json:"recipe,omitempty"`
	RequiredTools []string          `json:"required_tools,omitempty"`
	FailureModes  []string          `json:"failure_modes,omitempty"`
	Fallbacks     []string          `json:"fallbacks,omitempty"`
	Performance   *PerformanceStats `json:"performance,omitempty"`
	Version       string            `json:"version,omitempty"`
}

// Kind implements Payload.
func (*CompetencePayload) Kind() MemoryType { return TypeCompetence }

// Trigger says when a competence applies.
type Trigger struct {
	Signal     string         `json:"signal"`
	Conditions map[string]any `json:"conditions"`
}

// RecipeStep is one step of a competence.
type RecipeStep struct {
	Step       string         `json:"step"`
	Tool       string         `json:"tool,omitempty"`
	ArgsSchema map[string]any `json:"args_schema"`
	Validation string         `json:"validation,omitempty"`
}

// PerformanceStats tracks how well a competence works.
type PerformanceStats struct {
	SuccessCount int64      `json:"success_count"`
	FailureCount int64      `json:"failure_count"`
	SuccessRate  float64    `json:"success_rate"`
	AvgLatencyMs float64    `json:"avg_latency_ms,omitempty"`
	LastUsedAt   *time.Time `json:"last_used_at,omitempty"`
}

// PlanGraphPayload is a reusable plan: a directed graph of actions.
type PlanGraphPayload struct {
	PlanID        string         `json:"plan_id"`
	Version       string         `json:"version,omitempty"`
	Intent        string         `json:"intent,omitempty"`
	Constraints   map[string]any `json:"constraints"`
	InputsSchema  map[string]any `json:"inputs_schema"`
	OutputsSchema map[string]any `json:"outputs_schema"`
	Nodes         []PlanNode     `json:"nodes,omitempty"`
	Edges         []PlanEdge     `json:"edges,omitempty"`
	Metrics       *PlanMetrics   `json:"metrics,omitempty"`
}

// Kind implements Payload.
func (*PlanGraphPayload) Kind() MemoryType { return TypePlanGraph }

// PlanNode is one action of a plan.
type PlanNode struct {
	ID     string         `json:"id"`
	Op     string         `json:"op"`
	Params map[string]any `json:"params"`
	Guards map[string]any `json:"guards"`
}

// PlanEdge links two plan nodes.
type PlanEdge struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	Kind EdgeKind `json:"kind"`
}

// PlanMetrics tracks how a plan performs.
type PlanMetrics struct {
	AvgLatencyMs   float64    `json:"avg_latency_ms,omitempty"`
	FailureRate    float64    `json:"failure_rate"`
	ExecutionCount int64      `json:"execution_count"`
	LastExecutedAt *time.Time `json:"last_executed_at,omitempty"`
}

// EntityPayload is a named thing records mention: a person, tool, project…
type EntityPayload struct {
	CanonicalName string             `json:"canonical_name"`
	PrimaryType   string             `json:"primary_type"`
	Types         []string           `json:"types,omitempty"`
	Aliases       []EntityAlias      `json:"aliases,omitempty"`
	Identifiers   []EntityIdentifier `json:"identifiers,omitempty"`
	Summary       string             `json:"summary,omitempty"`
}

// Kind implements Payload.
func (*EntityPayload) Kind() MemoryType { return TypeEntity }

// EntityAlias is another name of an entity.
type EntityAlias struct {
	Value  string `json:"value"`
	Kind   string `json:"kind,omitempty"`
	Locale string `json:"locale,omitempty"`
}

// EntityIdentifier is an external identifier of an entity.
type EntityIdentifier struct {
	Namespace string `json:"namespace"`
	Value     string `json:"value"`
}

// EncodePayload returns the JSON form of p, as stored.
func EncodePayload(p Payload) ([]byte, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, Errorf(EINVALID, "payload cannot be encoded as JSON: %v", err)
	}
	return b, nil
}

// DecodePayload decodes a stored payload of the given type.
func DecodePayload(t MemoryType, data []byte) (Payload, error) {
	var p Payload
	switch t {
	case TypeEpisodic:
		p = &EpisodicPayload{}
	case TypeWorking:
		p = &WorkingPayload{}
	case TypeSemantic:
		p = &SemanticPayload{}
	case TypeCompetence:
		p = &CompetencePayload{}
	case TypePlanGraph:
		p = &PlanGraphPayload{}
	case TypeEntity:
		p = &EntityPayload{}
	default:
		return nil, fmt.Errorf("decode payload: unknown memory type %q", t)
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w", t, err)
	}
	return p, nil
}

// SearchText is the human text of a payload, which a record is embedded by
// (tags excluded). Full-text search indexes more of it: IndexText.
func SearchText(p Payload) string {
	var parts []string
	add := func(s ...string) {
		for _, v := range s {
			if v != "" {
				parts = append(parts, v)
			}
		}
	}
	switch p := p.(type) {
	case *EpisodicPayload:
		for _, e := range p.Timeline {
			add(e.EventKind, e.Summary)
		}
		for _, n := range p.ToolGraph {
			add(n.Tool)
			if s, ok := n.Result.(string); ok {
				add(s)
			}
		}
		if p.Outcome != nil {
			add(string(*p.Outcome))
		}
	case *WorkingPayload:
		add(p.ContextSummary, string(p.State))
		add(p.NextActions...)
		add(p.OpenQuestions...)
	case *SemanticPayload:
		add(p.Subject, p.Predicate, objectText(p.Object))
	case *CompetencePayload:
		add(p.SkillName)
		for _, t := range p.Triggers {
			add(t.Signal)
		}
		for _, s := range p.Recipe {
			add(s.Step, s.Tool)
		}
		add(p.RequiredTools...)
	case *PlanGraphPayload:
		add(p.Intent)
		for _, n := range p.Nodes {
			add(n.Op)
		}
	case *EntityPayload:
		add(p.CanonicalName, p.PrimaryType, p.Summary)
		for _, a := range p.Aliases {
			add(a.Value)
		}
	}
	return strings.Join(parts, " ")
}

// objectProp is a semantic object as its node property: a number or a
// boolean keeps its type (an object of 30 was stored "30", so that
// WHERE m.object > 20 found nothing in Browser), an integral number is an
// integer; anything else is objectText. toString(m.object) in Cypher is
// objectText for every scalar, so fact keys read from nodes
// (duplicate_facts) group as the Go keys do.
func objectProp(v any) any {
	switch v := v.(type) {
	case bool:
		return v
	case int:
		return int64(v)
	case int64:
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		if f, err := v.Float64(); err == nil {
			return objectProp(f)
		}
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
		return v
	}
	return objectText(v)
}

func objectText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(b)
	}
}

// DisplayName is a short caption for a record: what Neo4j Browser shows on
// the node (it captions nodes by their name property).
func DisplayName(r *Record) string {
	var s string
	switch p := r.Payload.(type) {
	case *EpisodicPayload:
		if len(p.Timeline) > 0 {
			e := p.Timeline[len(p.Timeline)-1]
			s = e.EventKind
			if e.Summary != "" {
				s += ": " + e.Summary
			}
		} else if len(p.ToolGraph) > 0 {
			s = "tool_call: " + p.ToolGraph[0].Tool
		}
	case *WorkingPayload:
		s = p.ThreadID + " (" + string(p.State) + ")"
	case *SemanticPayload:
		s = p.Subject + " " + p.Predicate + " " + objectText(p.Object)
	case *CompetencePayload:
		s = p.SkillName
	case *PlanGraphPayload:
		s = p.Intent
		if s == "" {
			s = "plan " + p.PlanID
		}
	case *EntityPayload:
		s = p.CanonicalName
	}
	if s == "" {
		s = string(r.Type) + " " + r.ID
	}
	const max = 80
	if len(s) > max {
		s = CutBytes(s, max) + "…"
	}
	return s
}

// CutBytes returns s cut to at most n bytes at a rune boundary.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// BrowserFields are payload fields copied onto the record's node as plain
// properties, so analysts can filter on them in Neo4j Browser without
// parsing the payload JSON. They are derived: the payload stays the truth.
func BrowserFields(p Payload) map[string]any {
	switch p := p.(type) {
	case *EpisodicPayload:
		// toolCalls lets consolidation find episodes worth a plan or a
		// competence without decoding every payload.
		f := map[string]any{"toolCalls": int64(len(p.ToolGraph))}
		if p.Outcome != nil {
			f["outcome"] = string(*p.Outcome)
		}
		return f
	case *WorkingPayload:
		return map[string]any{"threadId": p.ThreadID, "taskState": string(p.State)}
	case *SemanticPayload:
		return map[string]any{"subject": p.Subject, "predicate": p.Predicate, "object": objectProp(p.Object)}
	case *CompetencePayload:
		// Performance is copied out for the metrics aggregation.
		f := map[string]any{"skillName": p.SkillName}
		if ps := p.Performance; ps != nil {
			f["successCount"], f["failureCount"], f["successRate"] = ps.SuccessCount, ps.FailureCount, ps.SuccessRate
		}
		return f
	case *PlanGraphPayload:
		f := map[string]any{"planId": p.PlanID, "intent": p.Intent}
		if m := p.Metrics; m != nil {
			f["executionCount"], f["failureRate"] = m.ExecutionCount, m.FailureRate
		}
		return f
	case *EntityPayload:
		// terms are the normalised names the entity is resolved by
		// (captureMemory), indexed by entity_name_terms.
		return map[string]any{"canonicalName": p.CanonicalName, "primaryType": p.PrimaryType, "terms": EntityTerms(p)}
	}
	return nil
}

// PlanStep is one node of a plan graph, stored as a (:PlanStep) node beside
// its record so that analysts see and traverse the plan in Neo4j Browser.
type PlanStep struct {
	// ID is unique across plans: the record id, "/", the step id.
	ID       string
	StepID   string
	Op       string
	Params   string // JSON text
	Guards   string // JSON text
	Position int64
}

// PlanLink is an edge between two steps of a plan: NEXT for control flow,
// DATA for a data dependency.
type PlanLink struct {
	From, To string
	Type     string
}

// PlanSubgraph returns the steps and links of a plan graph record, derived
// from its payload (which stays the source of truth), or nothing for other
// records.
func PlanSubgraph(r *Record) ([]PlanStep, []PlanLink, error) {
	p, ok := r.Payload.(*PlanGraphPayload)
	if !ok {
		return nil, nil, nil
	}
	steps := make([]PlanStep, len(p.Nodes))
	for i, n := range p.Nodes {
		params, err := json.Marshal(n.Params)
		if err != nil {
			return nil, nil, fmt.Errorf("plan step %s: %w", n.ID, err)
		}
		guards, err := json.Marshal(n.Guards)
		if err != nil {
			return nil, nil, fmt.Errorf("plan step %s: %w", n.ID, err)
		}
		steps[i] = PlanStep{ID: r.ID + "/" + n.ID, StepID: n.ID, Op: n.Op, Params: string(params), Guards: string(guards), Position: int64(i)}
	}
	links := make([]PlanLink, 0, len(p.Edges))
	for _, e := range p.Edges {
		t := "NEXT"
		if e.Kind == EdgeData {
			t = "DATA"
		}
		links = append(links, PlanLink{From: e.From, To: e.To, Type: t})
	}
	return steps, links, nil
}

// SessionPosition is where r stands in its session's chain (NEXT edges,
// docs/data-model.md): the session (scope and EpisodicPayload.SessionID)
// and the instant episodes of a session are ordered by, its first timeline
// event's t or else its creation; ties break by id. ok is false for a
// record that is in no chain: not an episode, or one without a session.
func SessionPosition(r *Record) (session string, at time.Time, ok bool) {
	p, isEp := r.Payload.(*EpisodicPayload)
	if !isEp || p.SessionID == "" {
		return "", time.Time{}, false
	}
	at = r.CreatedAt
	if len(p.Timeline) > 0 && !p.Timeline[0].T.IsZero() {
		at = p.Timeline[0].T
	}
	return p.SessionID, at.UTC(), true
}
