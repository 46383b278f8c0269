package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// The tools, each a thin translation of its arguments to one application
// service call and of the result to a compact answer: every rule (trust,
// validation, revision, idempotency) is the services' and the stores', as
// for GraphQL. docs/mcp.md maps each tool to its GraphQL operation.

var (
	toolsOnce sync.Once
	toolList  []toolDef
)

// tools are the server's tools, in the order docs/mcp.md lists them.
func tools() []toolDef {
	toolsOnce.Do(func() {
		toolList = []toolDef{rememberTool, recallTool, reviseTool, relateTool, lineageTool, forgetTool,
			recordOutcomeTool, getRecordTool, listRecordsTool}
	})
	return toolList
}

// Enum values as tools take them: the domain's own spellings.
var (
	sensitivities = spellings(membrane.Sensitivities)
	memoryTypes   = spellings(membrane.MemoryTypes)
	statuses      = spellings(membrane.RevisionStatuses)
	// relatable are the predicates relate writes: the lineage edges are
	// written by revisions and next by the store (the services refuse
	// them to addRelation too).
	relatable = func() []string {
		var out []string
		for _, p := range membrane.Predicates {
			if !p.IsLineage() && p != membrane.PredNext {
				out = append(out, string(p))
			}
		}
		return out
	}()
	predicates = spellings(membrane.Predicates)
)

// spellings are the values of a domain enum as strings.
func spellings[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// Edge is a relation between two records.
type Edge struct {
	SourceID  string  `json:"source_id"`
	Predicate string  `json:"predicate"`
	TargetID  string  `json:"target_id"`
	Weight    float64 `json:"weight,omitempty"`
}

func edgeOf(r membrane.Relation) Edge {
	return Edge{SourceID: r.SourceID, Predicate: string(r.Predicate), TargetID: r.TargetID, Weight: r.Weight}
}

// optional is a pointer to s, nil when s is empty: tools take "absent" as
// the zero value, the services as nil.
func optional[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// parseTime reads an RFC 3339 argument ("" is none).
func parseTime(field, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, invalid(field, "must be an RFC 3339 time, e.g. 2025-01-31T12:00:00Z")
	}
	return &t, nil
}

// sensitivityOf is a sensitivity argument ("" is none).
func sensitivityOf(s string) *membrane.Sensitivity {
	if s == "" {
		return nil
	}
	v := membrane.Sensitivity(s)
	return &v
}

// Change are the arguments every revision shares: why (the audit
// trail's rationale; the principal is the actor) and the caller's
// idempotency key.
type Change struct {
	Rationale      string `json:"rationale,omitempty" jsonschema:"why, kept in the audit trail"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"a key of your choice: retrying with it never writes twice"`
}

// args are the services' arguments of c, expecting the target at
// expectedVersion (0: any).
func (c Change) args(expectedVersion int64) membrane.RevisionArgs {
	return membrane.RevisionArgs{Rationale: optional(c.Rationale), IdempotencyKey: optional(c.IdempotencyKey), ExpectedVersion: optional(expectedVersion)}
}

// ---- remember --------------------------------------------------------

// RememberInput are remember's arguments.
type RememberInput struct {
	Content        any      `json:"content" jsonschema:"what to remember: plain text, or an object. In an object, subject, predicate and object state a fact; tool, project, person, user, agent, service, file, path and repository (and keys naming entity or entities) name entities, which are linked and reused"`
	Kind           string   `json:"kind,omitempty" jsonschema:"what the content is: event (the default), observation, tool_output (content names tool, args, result), working_state (content names threadId and state), outcome, or any other kind of event"`
	Summary        string   `json:"summary,omitempty" jsonschema:"one line saying what it is, shown when it is recalled (default: the content's text)"`
	Reason         string   `json:"reason,omitempty" jsonschema:"why it is worth remembering"`
	Context        any      `json:"context,omitempty" jsonschema:"what surrounded it (kept with the record, not searched)"`
	Scope          string   `json:"scope,omitempty" jsonschema:"the scope to file it in, e.g. project:alpha (records without a scope are visible to every key)"`
	Tags           []string `json:"tags,omitempty"`
	Sensitivity    string   `json:"sensitivity,omitempty" jsonschema:"how sensitive it is (default: the server's default, low); at most your key's ceiling"`
	Source         string   `json:"source,omitempty" jsonschema:"who or what produced it (default: mcp); the audit trail records your key's actor either way"`
	OccurredAt     string   `json:"occurred_at,omitempty" jsonschema:"when it happened, RFC 3339 (default: now)"`
	IdempotencyKey string   `json:"idempotency_key,omitempty" jsonschema:"a key of your choice: retrying with it never writes twice"`
}

// RememberOutput is what remember wrote.
type RememberOutput struct {
	Record   Record   `json:"record" jsonschema:"the record of what was remembered"`
	Created  []Record `json:"created,omitempty" jsonschema:"entities and the fact created besides it"`
	Edges    []Edge   `json:"edges,omitempty"`
	Replayed bool     `json:"replayed,omitempty" jsonschema:"true when idempotency_key returned an earlier call's result"`
}

var rememberTool = &tool[RememberInput, RememberOutput]{
	name:  "remember",
	title: "Remember",
	description: "Store something worth remembering in long-term memory: an event, an observation, a tool's output, " +
		"the state of a task, or a fact. Use it when you learn something you or another agent will need later, " +
		"rather than keeping it only in the conversation. Plain text is fine; an object with subject, predicate " +
		"and object also records the fact, and names of tools, projects, people, services or files become entities " +
		"that later memories link to. Returns the new record's id.",
	enums:   map[string][]string{"sensitivity": sensitivities},
	renames: []rename{{"input.", ""}, {"sourceKind", "kind"}, {"reasonToRemember", "reason"}, {"timestamp", "occurred_at"}},
	run: func(ctx context.Context, svc *membrane.Services, in RememberInput) (RememberOutput, error) {
		if in.Content == nil || in.Content == "" {
			return RememberOutput{}, invalid("content", "is required: the text or object to remember")
		}
		at, err := parseTime("occurred_at", in.OccurredAt)
		if err != nil {
			return RememberOutput{}, err
		}
		source := in.Source
		if source == "" {
			source = "mcp"
		}
		c, err := svc.Capture.Capture(ctx, membrane.CaptureInput{
			Source: source, SourceKind: optional(in.Kind), Content: in.Content, Context: in.Context,
			ReasonToRemember: optional(in.Reason), Summary: optional(in.Summary), Tags: in.Tags, Scope: optional(in.Scope),
			Sensitivity: sensitivityOf(in.Sensitivity), Timestamp: at,
		}, optional(in.IdempotencyKey))
		if err != nil {
			return RememberOutput{}, err
		}
		out := RememberOutput{Record: recordOf(c.Primary, 0), Created: recordsOf(c.Created, 0), Replayed: c.Replayed}
		for _, e := range c.Edges {
			out.Edges = append(out.Edges, edgeOf(e))
		}
		return out, nil
	},
}

// ---- recall ------------------------------------------------------------

// Filter are the arguments recall and list_records share: which records
// to consider.
type Filter struct {
	Scope       string   `json:"scope,omitempty" jsonschema:"only this scope"`
	Scopes      []string `json:"scopes,omitempty" jsonschema:"only these scopes (default: every scope your key may see)"`
	Types       []string `json:"types,omitempty" jsonschema:"only these memory types"`
	Tags        []string `json:"tags,omitempty" jsonschema:"only records carrying all of these tags"`
	MinSalience float64  `json:"min_salience,omitempty" jsonschema:"only records at least this salient (0 to 10)"`
}

// scopes merges scope and scopes; nil when neither is given (every scope
// the caller may see).
func (f Filter) scopes() []string {
	if f.Scope != "" {
		return append(slices.Clip(f.Scopes), f.Scope)
	}
	return f.Scopes
}

// types are the memory types asked for.
func (f Filter) types() []membrane.MemoryType {
	out := make([]membrane.MemoryType, len(f.Types))
	for i, t := range f.Types {
		out[i] = membrane.MemoryType(t)
	}
	return out
}

// RecallInput are recall's arguments.
type RecallInput struct {
	Query string `json:"query,omitempty" jsonschema:"what to look for, in your own words (omit it to get the most salient recent records)"`
	Filter
	Limit            int    `json:"limit,omitempty" jsonschema:"how many hits (default 5, at most 100)"`
	IncludeRetracted bool   `json:"include_retracted,omitempty" jsonschema:"also return retracted and superseded records"`
	AsOf             string `json:"as_of,omitempty" jsonschema:"recall as memory stood at this time, RFC 3339"`
	MaxChars         int    `json:"max_chars,omitempty" jsonschema:"the most characters of text per hit (default 300)"`
}

// RecallOutput are recall's hits, best first.
type RecallOutput struct {
	Hits     []Hit    `json:"hits"`
	Warnings []string `json:"warnings,omitempty" jsonschema:"what degraded the search (e.g. full text only)"`
}

var recallTool = &tool[RecallInput, RecallOutput]{
	name:  "recall",
	title: "Recall",
	description: "Search long-term memory for what is relevant to a question or task, best first. Use it before " +
		"answering anything that past work, earlier conversations, known facts, people, projects or decisions may " +
		"bear on, and before redoing something that may have been done. Each hit gives the record's id, type, a " +
		"caption, the text that matched, when, and a score; get_record reads a hit in full, lineage shows its history.",
	readOnly:   true,
	idempotent: true,
	enums:      map[string][]string{"types[]": memoryTypes},
	renames:    []rename{{"memoryTypes", "types"}, {"minSalience", "min_salience"}},
	run: func(ctx context.Context, svc *membrane.Services, in RecallInput) (RecallOutput, error) {
		asOf, err := parseTime("as_of", in.AsOf)
		if err != nil {
			return RecallOutput{}, err
		}
		limit := int64(in.Limit)
		if limit == 0 {
			limit = DefaultRecallLimit
		}
		q, err := membrane.NewRetrieveQuery(optional(in.Query), in.types(), in.scopes(), optional(in.MinSalience),
			&limit, optional(in.IncludeRetracted), asOf)
		if err == nil {
			err = q.FilterTags(in.Tags)
		}
		if err != nil {
			return RecallOutput{}, err
		}
		r, err := svc.Read.Retrieve(ctx, q)
		if err != nil {
			return RecallOutput{}, err
		}
		out := RecallOutput{Hits: make([]Hit, 0, len(r.Hits)), Warnings: r.Warnings}
		chars := clampChars(in.MaxChars, DefaultHitChars)
		for _, h := range r.Hits {
			if h.Record != nil {
				out.Hits = append(out.Hits, hitOf(h, in.Query, chars))
			}
		}
		return out, nil
	},
}

// ---- revise ------------------------------------------------------------

// Revision operations.
const (
	opSupersede = "supersede"
	opFork      = "fork"
	opContest   = "contest"
	opRetract   = "retract"
	opMerge     = "merge"
)

// NewRecord is the record a supersede, fork or merge writes.
type NewRecord struct {
	Type        string         `json:"type,omitempty" jsonschema:"the memory type (default, and it must be: the revised record's)"`
	Payload     map[string]any `json:"payload" jsonschema:"the new content, in the fields get_record shows for that type (snake_case). A fact (semantic): subject, predicate, object and evidence, a list of {source_type, source_id}, which superseding, forking or merging a fact requires. An episode: timeline, a list of {t, event_kind, ref, summary}. Other types: see docs/mcp.md"`
	Scope       string         `json:"scope,omitempty" jsonschema:"default: the revised record's scope"`
	Tags        []string       `json:"tags,omitempty" jsonschema:"default: the revised record's tags"`
	Sensitivity string         `json:"sensitivity,omitempty" jsonschema:"default: the revised record's sensitivity"`
	Confidence  float64        `json:"confidence,omitempty" jsonschema:"0 to 1 (default 1)"`
}

// ReviseInput are revise's arguments.
type ReviseInput struct {
	Operation       string     `json:"operation" jsonschema:"supersede: replace a record with a corrected one (the old one is retired, its history kept); fork: derive a new record, the old one stays; contest: flag a record as disputed by evidence; retract: withdraw a record that was wrong; merge: combine records into one"`
	ID              string     `json:"id,omitempty" jsonschema:"the record to revise (every operation but merge)"`
	IDs             []string   `json:"ids,omitempty" jsonschema:"merge: the records to merge, at least two"`
	Record          *NewRecord `json:"record,omitempty" jsonschema:"supersede, fork and merge: the new record"`
	ContestingRef   string     `json:"contesting_ref,omitempty" jsonschema:"contest: the id of the record that disputes it, or an external reference (a URL, a ticket)"`
	ExpectedVersion int64      `json:"expected_version,omitempty" jsonschema:"revise only if the record is still at this version (CONFLICT otherwise)"`
	Change
}

var reviseTool = &tool[ReviseInput, Record]{
	name:  "revise",
	title: "Revise a memory",
	description: "Change what memory holds, keeping its history: supersede a record that became outdated or was " +
		"wrong with a corrected one, fork a variant, contest a record that evidence disputes, retract one that " +
		"should no longer be used, or merge duplicates. Use it instead of remembering a contradicting fact next to " +
		"the old one. Returns the resulting record; lineage shows the history.",
	destructive: true,
	enums:       map[string][]string{"operation": {opSupersede, opFork, opContest, opRetract, opMerge}, "record.sensitivity": sensitivities},
	renames: []rename{{"newRecord.", "record."}, {"mergedRecord.", "record."}, {"oldId", "id"}, {"sourceId", "id"},
		{"contestingRef", "contesting_ref"}, {"expectedVersion", "expected_version"}},
	run: func(ctx context.Context, svc *membrane.Services, in ReviseInput) (Record, error) {
		args := in.args(in.ExpectedVersion)
		var rec *membrane.Record
		var err error
		switch in.Operation {
		case opContest:
			if err = requireID(in.ID); err == nil {
				if in.ContestingRef == "" {
					return Record{}, invalid("contesting_ref", "is required to contest: the disputing record's id or an external reference")
				}
				rec, err = svc.Revise.Contest(ctx, in.ID, in.ContestingRef, args)
			}
		case opRetract:
			if err = requireID(in.ID); err == nil {
				rec, err = svc.Revise.Retract(ctx, in.ID, args)
			}
		case opSupersede, opFork:
			if err = requireID(in.ID); err != nil {
				break
			}
			var nr membrane.RecordInput
			if nr, err = newRecordInput(ctx, svc, in.ID, in.Record); err != nil {
				break
			}
			if in.Operation == opSupersede {
				rec, err = svc.Revise.Supersede(ctx, in.ID, nr, args)
			} else {
				rec, err = svc.Revise.Fork(ctx, in.ID, nr, args)
			}
		case opMerge:
			if err = membrane.ValidateMergeIDs(in.IDs); err != nil {
				break
			}
			var nr membrane.RecordInput
			if nr, err = newRecordInput(ctx, svc, in.IDs[0], in.Record); err == nil {
				rec, err = svc.Revise.Merge(ctx, in.IDs, nr, args)
			}
		default:
			err = invalid("operation", "must be one of: supersede, fork, contest, retract, merge")
		}
		if err != nil {
			return Record{}, err
		}
		return recordOf(rec, 0), nil
	},
}

func requireID(id string) error {
	if id == "" {
		return invalid("id", "is required: the id of the record to revise")
	}
	return nil
}

// newRecordInput is the record a revision of record base writes, from nr;
// what nr leaves out (type, scope, tags, sensitivity) is base's, as the
// caller sees it: a correction stays where the corrected record was, and
// a model that does not repeat the scope does not publish it unscoped.
// base is read only when something is left out; a record the caller may
// not see is NOT_FOUND, as the revision itself would answer.
func newRecordInput(ctx context.Context, svc *membrane.Services, base string, nr *NewRecord) (membrane.RecordInput, error) {
	if nr == nil {
		return membrane.RecordInput{}, invalid("record", "is required: the new record, with its payload")
	}
	in := membrane.RecordInput{Type: membrane.MemoryType(nr.Type), Scope: optional(nr.Scope), Tags: nr.Tags,
		Sensitivity: sensitivityOf(nr.Sensitivity), Confidence: optional(nr.Confidence)}
	if nr.Type == "" || nr.Scope == "" || nr.Tags == nil || nr.Sensitivity == "" {
		old, err := svc.Read.Record(ctx, base, nil)
		if err != nil {
			return in, err
		}
		if in.Type == "" {
			in.Type = old.Type
		}
		if in.Scope == nil {
			in.Scope = &old.Scope
		}
		if in.Tags == nil {
			in.Tags = old.Tags
		}
		if in.Sensitivity == nil {
			in.Sensitivity = &old.Sensitivity
		}
	}
	if !in.Type.Valid() {
		return in, invalid("record.type", "must be one of: %s", strings.Join(memoryTypes, ", "))
	}
	b, err := json.Marshal(nr.Payload)
	if err != nil || nr.Payload == nil {
		return in, invalid("record.payload", "is required: the new record's content")
	}
	p, err := membrane.DecodePayload(in.Type, b)
	if err != nil {
		return in, invalid("record.payload", "does not fit a %s payload: %v", in.Type, err)
	}
	in.Payload = payloadInput(p)
	return in, nil
}

// payloadInput carries p as the one payload of a record input.
func payloadInput(p membrane.Payload) membrane.PayloadInput {
	var in membrane.PayloadInput
	switch p := p.(type) {
	case *membrane.EpisodicPayload:
		in.Episodic = p
	case *membrane.WorkingPayload:
		in.Working = p
	case *membrane.SemanticPayload:
		in.Semantic = p
	case *membrane.CompetencePayload:
		in.Competence = p
	case *membrane.PlanGraphPayload:
		in.PlanGraph = p
	case *membrane.EntityPayload:
		in.Entity = p
	}
	return in
}

// ---- relate ------------------------------------------------------------

// RelateInput are relate's arguments.
type RelateInput struct {
	SourceID  string  `json:"source_id" jsonschema:"the record the relation goes from"`
	Predicate string  `json:"predicate" jsonschema:"how the source relates to the target: supports, contradicts, depends_on, uses, mentions, about, references, caused_by, related_to"`
	TargetID  string  `json:"target_id" jsonschema:"the record the relation goes to"`
	Weight    float64 `json:"weight,omitempty" jsonschema:"strength in (0,1] (default 1)"`
	Change
}

var relateTool = &tool[RelateInput, Edge]{
	name:  "relate",
	title: "Relate two memories",
	description: "Link two records with a typed relation (supports, contradicts, depends_on, uses, mentions, about, " +
		"references, caused_by, related_to), so that recall and lineage find one through the other. Use it when " +
		"you notice that one memory explains, supports or contradicts another. Both records must be ones you may revise.",
	idempotent: true,
	enums:      map[string][]string{"predicate": relatable},
	renames:    []rename{{"sourceId", "source_id"}, {"targetId", "target_id"}},
	run: func(ctx context.Context, svc *membrane.Services, in RelateInput) (Edge, error) {
		r, err := svc.Relate.AddRelation(ctx, in.SourceID, membrane.Predicate(in.Predicate), in.TargetID, optional(in.Weight),
			in.args(0))
		if err != nil {
			return Edge{}, err
		}
		return edgeOf(*r), nil
	},
}

// ---- lineage -----------------------------------------------------------

// LineageInput are lineage's arguments.
type LineageInput struct {
	ID           string   `json:"id" jsonschema:"the record whose lineage to show"`
	Direction    string   `json:"direction,omitempty" jsonschema:"ancestors (what it came from, what it replaced), descendants (what came from it, what replaced it) or both (the default)"`
	Predicates   []string `json:"predicates,omitempty" jsonschema:"the relations to follow (default: supersedes, derived_from, contested_by)"`
	MaxDepth     int      `json:"max_depth,omitempty" jsonschema:"how many hops (default 10)"`
	Limit        int      `json:"limit,omitempty" jsonschema:"the most records (default 25)"`
	AuditEntries int      `json:"audit_entries,omitempty" jsonschema:"how many of the record's audit entries, newest first (default 10)"`
	AsOf         string   `json:"as_of,omitempty" jsonschema:"the lineage as it stood at this time, RFC 3339"`
}

// LineageNode is a record of a lineage, depth hops from its root.
type LineageNode struct {
	Record
	Depth int `json:"depth"`
}

// AuditEntry is one change of a record.
type AuditEntry struct {
	Action    string `json:"action"`
	Actor     string `json:"actor"`
	At        string `json:"at"`
	Rationale string `json:"rationale,omitempty"`
}

// LineageOutput is a record's lineage and history.
type LineageOutput struct {
	Record    Record        `json:"record" jsonschema:"the record asked about"`
	Nodes     []LineageNode `json:"nodes" jsonschema:"the records its lineage reaches"`
	Edges     []Edge        `json:"edges"`
	History   []Record      `json:"history" jsonschema:"its supersede chain, oldest first: every version of this memory"`
	Current   string        `json:"current" jsonschema:"the id of the chain's current version"`
	Audit     []AuditEntry  `json:"audit" jsonschema:"its audit entries, newest first"`
	Truncated bool          `json:"truncated,omitempty" jsonschema:"true when limit cut the lineage short"`
}

var directions = map[string]membrane.Direction{"ancestors": membrane.DirOut, "descendants": membrane.DirIn, "both": membrane.DirBoth}

var lineageTool = &tool[LineageInput, LineageOutput]{
	name:  "lineage",
	title: "Lineage and history",
	description: "Show where a record came from and what became of it: the records it superseded or was derived " +
		"from, those that superseded, forked or contest it, its chain of versions with the current one, and its " +
		"audit trail (who changed it, when, why). Use it before relying on a memory that may be outdated or disputed, " +
		"or to explain how a fact changed.",
	readOnly:   true,
	idempotent: true,
	enums:      map[string][]string{"direction": {"ancestors", "descendants", "both"}, "predicates[]": predicates},
	renames:    []rename{{"maxDepth", "max_depth"}},
	run: func(ctx context.Context, svc *membrane.Services, in LineageInput) (LineageOutput, error) {
		asOf, err := parseTime("as_of", in.AsOf)
		if err != nil {
			return LineageOutput{}, err
		}
		dir := directions["both"]
		if in.Direction != "" {
			dir = directions[in.Direction]
		}
		preds := make([]membrane.Predicate, len(in.Predicates))
		for i, p := range in.Predicates {
			preds[i] = membrane.Predicate(p)
		}
		limit := int64(in.Limit)
		if limit == 0 {
			limit = DefaultLineageLimit
		}
		q, err := membrane.NewLineageQuery(&dir, preds, optional(int64(in.MaxDepth)), &limit, asOf)
		if err != nil {
			return LineageOutput{}, err
		}
		lin, err := svc.Read.Lineage(ctx, in.ID, q)
		if err != nil {
			return LineageOutput{}, err
		}
		out := LineageOutput{Nodes: []LineageNode{}, Edges: []Edge{}, History: []Record{}, Audit: []AuditEntry{}, Truncated: lin.Truncated}
		for _, n := range lin.Nodes {
			if n.Depth == 0 {
				out.Record = recordOf(n.Record, 0)
				continue
			}
			out.Nodes = append(out.Nodes, LineageNode{Record: recordOf(n.Record, 0), Depth: n.Depth})
		}
		for _, e := range lin.Edges {
			out.Edges = append(out.Edges, edgeOf(*e))
		}
		chains, err := svc.Read.SupersedeChains(ctx, []string{in.ID}, asOf)
		if err != nil {
			return LineageOutput{}, err
		}
		out.History = recordsOf(chains[in.ID], 0)
		out.Current = in.ID
		if head := membrane.Head(chains[in.ID]); head != nil {
			out.Current = head.ID
		}
		n := int64(in.AuditEntries)
		if n == 0 {
			n = DefaultAuditEntries
		}
		page, err := membrane.NewPage(&n, nil)
		if err != nil {
			return LineageOutput{}, err
		}
		audits, err := svc.Read.AuditPages(ctx, []string{in.ID}, membrane.AuditNewestFirst, page)
		if err != nil {
			return LineageOutput{}, err
		}
		if p := audits[in.ID]; p != nil {
			for _, a := range p.Items {
				out.Audit = append(out.Audit, AuditEntry{Action: string(a.Action), Actor: a.Actor, At: timeText(a.Timestamp), Rationale: a.Rationale})
			}
		}
		return out, nil
	},
}

// ---- forget ------------------------------------------------------------

// ForgetInput are forget's arguments.
type ForgetInput struct {
	ID              string `json:"id" jsonschema:"the record to forget"`
	Delete          bool   `json:"delete,omitempty" jsonschema:"admins only: delete the record and its relations for good (a tombstone stays in the audit trail) instead of retracting it"`
	ExpectedVersion int64  `json:"expected_version,omitempty" jsonschema:"forget only if the record is still at this version (CONFLICT otherwise)"`
	Change
}

// ForgetOutput says what was forgotten.
type ForgetOutput struct {
	ID     string  `json:"id"`
	Action string  `json:"action" jsonschema:"retracted or deleted"`
	Record *Record `json:"record,omitempty" jsonschema:"the retracted record"`
}

var forgetTool = &tool[ForgetInput, ForgetOutput]{
	name:  "forget",
	title: "Forget",
	description: "Stop a record from being used: retract it (it stays in its history, marked retracted, and recall " +
		"leaves it out), or, for admins with delete, delete it for good. Use it for a memory that was wrong or must " +
		"not be used; to correct a memory, use revise with supersede instead, which keeps the correction linked.",
	destructive: true,
	renames:     []rename{{"expectedVersion", "expected_version"}},
	run: func(ctx context.Context, svc *membrane.Services, in ForgetInput) (ForgetOutput, error) {
		if in.Delete {
			if in.IdempotencyKey != "" {
				return ForgetOutput{}, invalid("idempotency_key", "applies to a retraction only: a deletion is never repeated")
			}
			a, err := svc.Delete.DeleteRecord(ctx, in.ID, optional(in.Rationale), optional(in.ExpectedVersion))
			if err != nil {
				return ForgetOutput{}, err
			}
			return ForgetOutput{ID: a.RecordID, Action: "deleted"}, nil
		}
		rec, err := svc.Revise.Retract(ctx, in.ID, in.args(in.ExpectedVersion))
		if err != nil {
			return ForgetOutput{}, err
		}
		r := recordOf(rec, 0)
		return ForgetOutput{ID: rec.ID, Action: "retracted", Record: &r}, nil
	},
}

// ---- record_outcome ----------------------------------------------------

// RecordOutcomeInput are record_outcome's arguments.
type RecordOutcomeInput struct {
	RecordID string `json:"record_id" jsonschema:"the skill (competence) or plan (plan_graph) record that was used"`
	Status   string `json:"status" jsonschema:"how using it went"`
	Change
}

var recordOutcomeTool = &tool[RecordOutcomeInput, Record]{
	name:  "record_outcome",
	title: "Record an outcome",
	description: "Report how using a remembered skill or plan went (success, failure or partial), so that its " +
		"success rate, and what recall ranks first next time, follow experience. Use it after acting on a " +
		"competence or plan_graph record that recall returned.",
	enums:   map[string][]string{"status": {string(membrane.OutcomeSuccess), string(membrane.OutcomeFailure), string(membrane.OutcomePartial)}},
	renames: []rename{{"recordId", "record_id"}},
	run: func(ctx context.Context, svc *membrane.Services, in RecordOutcomeInput) (Record, error) {
		rec, err := svc.Outcomes.RecordOutcome(ctx, in.RecordID, membrane.OutcomeStatus(in.Status), in.args(0))
		if err != nil {
			return Record{}, err
		}
		return recordOf(rec, 0), nil
	},
}

// ---- get_record --------------------------------------------------------

// GetRecordInput are get_record's arguments.
type GetRecordInput struct {
	ID       string `json:"id"`
	AsOf     string `json:"as_of,omitempty" jsonschema:"the record as it stood at this time, RFC 3339"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"the most characters of text and of payload (default 2000)"`
}

// Source is one provenance source of a record.
type Source struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// RecordDetail is a record in full, within max_chars.
type RecordDetail struct {
	Record
	Confidence      float64  `json:"confidence"`
	Salience        float64  `json:"salience"`
	UpdatedAt       string   `json:"updated_at"`
	Payload         any      `json:"payload,omitempty" jsonschema:"the record's content, by its type's fields; absent when larger than max_chars (see payload_text)"`
	PayloadText     string   `json:"payload_text,omitempty" jsonschema:"the payload's JSON cut to max_chars, when it is larger"`
	Sources         []Source `json:"sources,omitempty" jsonschema:"where it came from (the sources you may know of)"`
	ContestEvidence []string `json:"contest_evidence,omitempty" jsonschema:"external references that contest it"`
}

var getRecordTool = &tool[GetRecordInput, RecordDetail]{
	name:  "get_record",
	title: "Read a record",
	description: "Read one record in full by its id: its content (payload), text, labels, confidence, salience and " +
		"sources. Use it when a recall hit or a listed record looks relevant and you need more than its snippet.",
	readOnly:   true,
	idempotent: true,
	run: func(ctx context.Context, svc *membrane.Services, in GetRecordInput) (RecordDetail, error) {
		asOf, err := parseTime("as_of", in.AsOf)
		if err != nil {
			return RecordDetail{}, err
		}
		rec, err := svc.Read.Record(ctx, in.ID, asOf)
		if err != nil {
			return RecordDetail{}, err
		}
		chars := clampChars(in.MaxChars, DefaultRecordChars)
		out := RecordDetail{Record: recordOf(rec, chars), Confidence: round3(rec.Confidence), Salience: round3(rec.Salience),
			UpdatedAt: timeText(rec.UpdatedAt), ContestEvidence: rec.ContestEvidence}
		if rec.Redacted {
			return out, nil
		}
		out.Payload, out.PayloadText = payloadOf(rec.Payload, chars)
		provs, err := svc.Read.Provenance(ctx, []*membrane.Record{rec})
		if err != nil {
			return RecordDetail{}, err
		}
		if p := provs[0]; p != nil {
			for _, s := range p.Sources {
				out.Sources = append(out.Sources, Source{Kind: string(s.Kind), Ref: s.Ref})
			}
		}
		return out, nil
	},
}

// ---- list_records ------------------------------------------------------

// ListRecordsInput are list_records' arguments.
type ListRecordsInput struct {
	Filter
	Statuses      []string `json:"statuses,omitempty"`
	Text          string   `json:"text,omitempty" jsonschema:"only records matching this text, as recall matches it"`
	CreatedAfter  string   `json:"created_after,omitempty" jsonschema:"RFC 3339"`
	CreatedBefore string   `json:"created_before,omitempty" jsonschema:"RFC 3339"`
	OrderBy       string   `json:"order_by,omitempty" jsonschema:"created_at (the default), updated_at, salience or confidence"`
	Ascending     bool     `json:"ascending,omitempty" jsonschema:"oldest or lowest first (default: newest or highest first)"`
	PageSize      int      `json:"page_size,omitempty" jsonschema:"records per page (default 10, at most 500)"`
	Cursor        string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	MaxChars      int      `json:"max_chars,omitempty" jsonschema:"the most characters of text per record (default 200)"`
}

// ListRecordsOutput is one page of records.
type ListRecordsOutput struct {
	Records    []Record `json:"records"`
	HasMore    bool     `json:"has_more"`
	NextCursor string   `json:"next_cursor,omitempty" jsonschema:"pass it as cursor for the next page"`
}

var orderFields = map[string]membrane.RecordOrderField{"created_at": membrane.OrderCreatedAt, "updated_at": membrane.OrderUpdatedAt,
	"salience": membrane.OrderSalience, "confidence": membrane.OrderConfidence}

var listRecordsTool = &tool[ListRecordsInput, ListRecordsOutput]{
	name:  "list_records",
	title: "List records",
	description: "List records by filters (types, scopes, tags, statuses, text, salience, creation time), newest " +
		"first, a page at a time. Use it to browse or audit what memory holds, e.g. every fact of a scope or " +
		"everything tagged with a project; use recall instead to find what is relevant to a question.",
	readOnly:   true,
	idempotent: true,
	enums: map[string][]string{"types[]": memoryTypes, "statuses[]": statuses,
		"order_by": {"created_at", "updated_at", "salience", "confidence"}},
	renames: []rename{{"filter.", ""}, {"minSalience", "min_salience"}, {"maxSalience", "max_salience"}, {"createdBefore", "created_before"},
		{"createdAfter", "created_after"}, {"first", "page_size"}, {"after", "cursor"}},
	run: func(ctx context.Context, svc *membrane.Services, in ListRecordsInput) (ListRecordsOutput, error) {
		f := membrane.RecordFilter{Types: in.types(), Scopes: in.scopes(), Tags: in.Tags, Text: in.Text, MinSalience: optional(in.MinSalience)}
		for _, s := range in.Statuses {
			f.Statuses = append(f.Statuses, membrane.RevisionStatus(s))
		}
		var err error
		if f.CreatedAfter, err = parseTime("created_after", in.CreatedAfter); err != nil {
			return ListRecordsOutput{}, err
		}
		if f.CreatedBefore, err = parseTime("created_before", in.CreatedBefore); err != nil {
			return ListRecordsOutput{}, err
		}
		if err := f.Validate(); err != nil {
			return ListRecordsOutput{}, err
		}
		order := membrane.DefaultRecordOrder
		if in.OrderBy != "" {
			order.Field = orderFields[in.OrderBy]
		}
		order.Descending = !in.Ascending
		size := int64(in.PageSize)
		if size == 0 {
			size = DefaultPageSize
		}
		page, err := membrane.NewPage(&size, optional(in.Cursor))
		if err != nil {
			return ListRecordsOutput{}, err
		}
		p, err := svc.Read.Records(ctx, f, order, page)
		if err != nil {
			return ListRecordsOutput{}, err
		}
		out := ListRecordsOutput{Records: recordsOf(p.Items, clampChars(in.MaxChars, DefaultListChars)), HasMore: p.PageInfo.HasNextPage}
		if p.PageInfo.HasNextPage && p.PageInfo.EndCursor != nil {
			out.NextCursor = *p.PageInfo.EndCursor
		}
		return out, nil
	},
}
