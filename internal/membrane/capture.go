package membrane

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// Capture bounds.
const (
	// MaxMentions bounds the entities one capture may mention.
	MaxMentions = 50
	// MaxTermBytes bounds an entity name or alias used for resolution;
	// longer names are stored but never resolved to.
	MaxTermBytes = 1000
	// MaxSourceKindBytes bounds sourceKind.
	MaxSourceKindBytes = 256
	// maxSummaryBytes bounds the summary derived from content.
	maxSummaryBytes = 2000
)

// CaptureInput is one captureMemory call: something an agent experienced,
// as free-form content, to be remembered with the entities it mentions.
type CaptureInput struct {
	Source string
	// SourceKind says what the content is: event (the default),
	// tool_output, observation, working_state, or any other kind of event.
	SourceKind       *string
	Content          any
	Context          any
	ReasonToRemember *string
	Summary          *string
	Tags             []string
	Scope            *string
	Sensitivity      *Sensitivity
	Timestamp        *time.Time
}

// Mention is an entity named by a capture's content.
type Mention struct {
	// Name is the name as written; Term its normalised form.
	Name string
	Term string
	// Aliases are other names as written.
	Aliases []string
	// Type is the primary type a new entity gets.
	Type string
}

// terms returns the mention's normalised name and aliases.
func (m Mention) terms() []string {
	out := []string{m.Term}
	for _, a := range m.Aliases {
		if t := NormaliseTerm(a); t != "" && len(t) <= MaxTermBytes && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Triple is a fact carried by a capture's content.
type Triple struct {
	Subject   string
	Predicate string
	Object    any
}

// NormaliseTerm is the form entity names are matched in: lower case,
// surrounding space trimmed, inner runs of space collapsed to one.
func NormaliseTerm(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// EntityTerms are the normalised names an entity is resolved by: its
// canonical name and aliases (those up to MaxTermBytes), without duplicates.
func EntityTerms(p *EntityPayload) []string {
	out := []string{}
	add := func(s string) {
		if t := NormaliseTerm(s); t != "" && len(t) <= MaxTermBytes && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	add(p.CanonicalName)
	for _, a := range p.Aliases {
		add(a.Value)
	}
	return out
}

// mentionKeys are the content keys whose values name entities, with the
// primary type a new entity gets. Keys containing "entity" or "entities"
// name entities too (type Concept unless the value says otherwise).
var mentionKeys = map[string]string{
	"subject":    "Concept",
	"tool":       "Tool",
	"tool_name":  "Tool",
	"project":    "Project",
	"file":       "File",
	"path":       "File",
	"person":     "Person",
	"user":       "Person",
	"agent":      "Agent",
	"service":    "Service",
	"repository": "Repository",
	"repo":       "Repository",
}

// Capture is a validated capture, ready to be planned against the entities
// found for it.
type Capture struct {
	Primary  *Record
	Mentions []Mention
	Triple   *Triple
	// Source is the input's source; it is the audit entries' actor detail.
	Source string
	kind   string
	ts     time.Time
	now    time.Time
	policy Policy
	// embeddings are vectors keyed as EmbedTexts keys them.
	embeddings     map[string][]float64
	embeddingModel string
}

// EmbedTexts are the texts the capture's records are embedded by, keyed
// "primary", "fact" and "entity:<term>" (for each mention, in case it
// becomes a new entity).
func (c *Capture) EmbedTexts() map[string]string {
	out := map[string]string{"primary": EmbedText(c.Primary)}
	if tr := c.Triple; tr != nil {
		out["fact"] = SearchText(&SemanticPayload{Subject: tr.Subject, Predicate: tr.Predicate, Object: tr.Object})
	}
	for _, m := range c.Mentions {
		aliases := make([]EntityAlias, len(m.Aliases))
		for i, a := range m.Aliases {
			aliases[i] = EntityAlias{Value: a}
		}
		out["entity:"+m.Term] = SearchText(&EntityPayload{CanonicalName: m.Name, PrimaryType: m.Type, Aliases: aliases})
	}
	for k, v := range out {
		if v == "" {
			delete(out, k)
		}
	}
	return out
}

// SetEmbeddings gives the capture the vectors of its EmbedTexts, by key,
// and the model that made them.
func (c *Capture) SetEmbeddings(v map[string][]float64, model string) {
	c.embeddings, c.embeddingModel = v, model
}

// BuildCapture validates a capture and builds its primary record:
//
//   - working_state: a working record from content threadId (or
//     thread_id, thread), state (any case: BLOCKED as the API spells it,
//     or blocked), nextActions, openQuestions, contextSummary (or the
//     capture's summary), activeConstraints;
//   - tool_output: an episodic record with one tool node from content
//     toolName (or tool_name, tool), args, result, dependsOn;
//   - anything else: an episodic record with one timeline event of that
//     kind ("event" by default), ref content.ref or content.id.
//
// The API's spellings (camelCase keys, upper-case states) are read first;
// the snake_case keys read before them still are.
//
// Episodic primaries keep the content, context and reason in
// environment.context. Entities are mentioned by the content keys of
// mentionKeys (and keys containing "entity" or "entities"), at the top level or under
// "fact"; a subject, predicate and object there make a fact.
func (p Policy) BuildCapture(in CaptureInput, now time.Time) (*Capture, error) {
	v := &validator{}
	v.str("source", in.Source, true)
	if len(in.Source) > 256 {
		v.add("source", "exceeds 256 bytes")
	}
	kind := SourceEvent
	if in.SourceKind != nil && *in.SourceKind != "" {
		kind = *in.SourceKind
		if len(kind) > MaxSourceKindBytes {
			v.add("sourceKind", "exceeds %d bytes", MaxSourceKindBytes)
		}
	}
	v.json("content", in.Content)
	v.json("context", in.Context)
	if in.ReasonToRemember != nil {
		v.str("reasonToRemember", *in.ReasonToRemember, false)
	}
	if in.Summary != nil {
		v.str("summary", *in.Summary, false)
	}
	v.tags("tags", in.Tags)
	if in.Sensitivity != nil && !in.Sensitivity.Valid() {
		v.add("sensitivity", "must be one of: public, low, medium, high, hyper")
	}
	mentions := extractMentions(in.Content, v)
	if err := v.err(); err != nil {
		return nil, err
	}
	now = now.UTC()
	ts := now
	if in.Timestamp != nil {
		ts = in.Timestamp.UTC()
	}
	c := &Capture{Mentions: mentions, Triple: tripleOf(in.Content), Source: in.Source, kind: kind, ts: ts, now: now, policy: p}
	content, _ := in.Content.(map[string]any)
	summary := firstNonEmpty(deref(in.Summary), deref(in.ReasonToRemember), contentText(in.Content))
	env := &EnvironmentSnapshot{Context: map[string]any{"capture_content": in.Content, "capture_context": in.Context}}
	if in.ReasonToRemember != nil {
		env.Context["reason_to_remember"] = *in.ReasonToRemember
	}
	var payload PayloadInput
	var t MemoryType
	ref := firstNonEmpty(str(content["ref"]), str(content["id"]))
	pk := ProvenanceEvent
	switch kind {
	case SourceWorkingState:
		t = TypeWorking
		w := &WorkingPayload{
			ThreadID:       firstNonEmpty(str(content["threadId"]), str(content["thread_id"]), str(content["thread"])),
			State:          TaskState(strings.ToLower(str(content["state"]))),
			NextActions:    strList(either(content, "nextActions", "next_actions")),
			OpenQuestions:  strList(either(content, "openQuestions", "open_questions")),
			ContextSummary: firstNonEmpty(str(content["contextSummary"]), str(content["context_summary"]), deref(in.Summary)),
		}
		if w.ThreadID == "" {
			v.add("content.threadId", "is required for a working_state capture (threadId, or thread_id)")
		}
		if !w.State.Valid() {
			v.add("content.state", "must be one of: PLANNING, EXECUTING, BLOCKED, WAITING, DONE (any case)")
		}
		for i, raw := range list(either(content, "activeConstraints", "active_constraints")) {
			m, ok := raw.(map[string]any)
			if !ok {
				v.add("content.active_constraints["+itoa(i)+"]", "must be an object {type, key, value, required}")
				continue
			}
			req, _ := m["required"].(bool)
			w.ActiveConstraints = append(w.ActiveConstraints, Constraint{Type: str(m["type"]), Key: str(m["key"]), Value: m["value"], Required: req})
		}
		ref = w.ThreadID
		payload.Working = w
	case SourceToolOutput:
		t = TypeEpisodic
		pk = ProvenanceToolCall
		tool := firstNonEmpty(str(content["toolName"]), str(content["tool_name"]), str(content["tool"]))
		if tool == "" {
			v.add("content.tool_name", "is required for a tool_output capture")
		}
		args, _ := content["args"].(map[string]any)
		payload.Episodic = &EpisodicPayload{
			Timeline: []TimelineEvent{{T: ts, EventKind: "tool_call", Ref: tool,
				Summary: firstNonEmpty(deref(in.Summary), deref(in.ReasonToRemember), str(content["result"]), "tool_call: "+tool)}},
			ToolGraph:   []ToolNode{{ID: "1", Tool: tool, Args: args, Result: content["result"], Timestamp: &ts, DependsOn: strList(either(content, "dependsOn", "depends_on"))}},
			Environment: env,
		}
		ref = tool
	default:
		t = TypeEpisodic
		switch kind {
		case SourceObservation:
			pk = ProvenanceObservation
		case SourceOutcome:
			pk = ProvenanceOutcome
		}
		if ref == "" {
			ref = "capture:" + NewID()
		}
		payload.Episodic = &EpisodicPayload{
			Timeline:    []TimelineEvent{{T: ts, EventKind: kind, Ref: ref, Summary: summary}},
			Environment: env,
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	conf := SourceConfidence(kind)
	r, err := p.BuildRecord(RecordInput{
		Type: t, Sensitivity: in.Sensitivity, Confidence: &conf, Scope: in.Scope, Tags: in.Tags,
		Provenance: &ProvenanceInput{Sources: []ProvenanceSource{{Kind: pk, Ref: ref, CreatedBy: in.Source, Timestamp: &ts}}, CreatedBy: new(IngestActor)},
		Payload:    payload,
	}, now)
	if err != nil {
		return nil, err
	}
	c.Primary = r
	return c, nil
}

// Scope is the scope of everything the capture writes.
func (c *Capture) Scope() string { return c.Primary.Scope }

// Terms are the normalised names the capture's entities are looked up by.
func (c *Capture) Terms() []string {
	var out []string
	for _, m := range c.Mentions {
		for _, t := range m.terms() {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// CapturePlan is what a capture writes, planned against the entities found.
type CapturePlan struct {
	Change *Change
	// Created are the new records besides the primary: entities, then the fact.
	Created []*Record
	// Reused are the ids of existing entities the capture links to.
	Reused []string
	// NewTerms are the normalised names of the entities to be created.
	NewTerms []string
}

// Plan resolves each mention to an existing entity of found, or plans a
// new one, and plans the fact, the edges and the audit entries:
//
//   - primary -MENTIONS-> each mentioned entity;
//   - fact -DERIVED_FROM-> primary, fact -ABOUT-> its subject's entity,
//     fact -MENTIONS-> its object's entity when the object names one.
//
// Only entities of the capture's own scope that are not retracted are
// reused, whatever found holds: a capture never links across scopes. A
// mention matches an entity whose canonical name equals it first, then one
// with an alias equal to it, then one matching any of the mention's own
// aliases; among equals the oldest wins. actor is the principal recorded in
// the audit entries (the input's source is their detail).
func (c *Capture) Plan(found []*Record, actor string) *CapturePlan {
	type cand struct {
		r     *Record
		terms []string
	}
	var cands []cand
	for _, r := range found {
		e, ok := r.Payload.(*EntityPayload)
		if !ok || r.Type != TypeEntity || r.Scope != c.Scope() || r.Status.Retired() || r.Redacted {
			continue
		}
		cands = append(cands, cand{r, EntityTerms(e)})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if !cands[i].r.CreatedAt.Equal(cands[j].r.CreatedAt) {
			return cands[i].r.CreatedAt.Before(cands[j].r.CreatedAt)
		}
		return cands[i].r.ID < cands[j].r.ID
	})
	resolve := func(m Mention) *Record {
		for _, c := range cands { // canonical name
			if c.terms[0] == m.Term {
				return c.r
			}
		}
		for _, c := range cands { // alias
			if slices.Contains(c.terms[1:], m.Term) {
				return c.r
			}
		}
		for _, c := range cands { // the mention's aliases
			for _, t := range m.terms()[1:] {
				if slices.Contains(c.terms, t) {
					return c.r
				}
			}
		}
		return nil
	}

	p := &CapturePlan{Change: &Change{Creates: []*Record{c.Primary}, Result: c.Primary}}
	ch := p.Change
	embed := func(id, key string) {
		if v, ok := c.embeddings[key]; ok {
			if ch.Embeddings == nil {
				ch.Embeddings, ch.EmbeddingModel = map[string][]float64{}, c.embeddingModel
			}
			ch.Embeddings[id] = v
		}
	}
	embed(c.Primary.ID, "primary")
	audit := func(r *Record, why string, refs ...AuditRef) {
		a := withRefs(NewAuditEntry(r.ID, AuditCreate, actor, why, c.now), refs...)
		a.ActorDetail = c.Source
		ch.Audits = append(ch.Audits, a)
	}
	edge := func(pred Predicate, from, to string) {
		for _, e := range ch.Edges {
			if e.Predicate == pred && e.SourceID == from && e.TargetID == to {
				return
			}
		}
		ch.Edges = append(ch.Edges, Relation{Predicate: pred, SourceID: from, TargetID: to, Weight: 1, CreatedAt: c.now, Actor: actor})
	}
	audit(c.Primary, "Captured "+c.kind+" from "+c.Source)
	sources := []ProvenanceSource{{Kind: ProvenanceObservation, Ref: c.Primary.ID, CreatedBy: c.Source, Timestamp: &c.ts}}
	entityOf := map[string]string{} // mention name or alias (normalised) -> entity id
	for _, m := range c.Mentions {
		if r := resolve(m); r != nil {
			for _, t := range m.terms() {
				entityOf[t] = r.ID
			}
			if !slices.Contains(p.Reused, r.ID) {
				p.Reused = append(p.Reused, r.ID)
			}
			edge(PredMentions, c.Primary.ID, r.ID)
			continue
		}
		aliases := make([]EntityAlias, 0, len(m.Aliases))
		for _, a := range m.Aliases {
			aliases = append(aliases, EntityAlias{Value: a})
		}
		e := c.derived(TypeEntity, nil, PayloadInput{Entity: &EntityPayload{CanonicalName: m.Name, PrimaryType: m.Type, Aliases: aliases}}, sources)
		ch.Creates = append(ch.Creates, e)
		p.Created = append(p.Created, e)
		p.NewTerms = append(p.NewTerms, m.terms()...)
		for _, t := range m.terms() {
			entityOf[t] = e.ID
		}
		audit(e, "Entity mentioned by a capture", refTo(RefDerivedFrom, c.Primary))
		embed(e.ID, "entity:"+m.Term)
		edge(PredMentions, c.Primary.ID, e.ID)
	}
	if tr := c.Triple; tr != nil {
		f := c.derived(TypeSemantic, c.Primary.Tags, PayloadInput{Semantic: &SemanticPayload{
			Subject: tr.Subject, Predicate: tr.Predicate, Object: tr.Object,
			Validity:       &Validity{Mode: ValidityGlobal},
			Evidence:       []EvidenceRef{{SourceType: string(c.Primary.Type), SourceID: c.Primary.ID, Timestamp: &c.ts}},
			RevisionPolicy: "replace",
		}}, sources)
		ch.Creates = append(ch.Creates, f)
		p.Created = append(p.Created, f)
		audit(f, "Fact derived from a capture", refTo(RefDerivedFrom, c.Primary))
		embed(f.ID, "fact")
		edge(PredDerivedFrom, f.ID, c.Primary.ID)
		if id, ok := entityOf[NormaliseTerm(tr.Subject)]; ok {
			edge(PredAbout, f.ID, id)
		}
		if o, ok := tr.Object.(string); ok {
			if id, ok := entityOf[NormaliseTerm(o)]; ok {
				edge(PredMentions, f.ID, id)
			}
		}
	}
	return p
}

// derived builds a record the capture derives from its primary: same scope,
// sensitivity and confidence, the policy's lifecycle for its type.
func (c *Capture) derived(t MemoryType, tags []string, payload PayloadInput, sources []ProvenanceSource) *Record {
	sens, conf, scope := c.Primary.Sensitivity, c.Primary.Confidence, c.Primary.Scope
	r, err := c.policy.BuildRecord(RecordInput{
		Type: t, Sensitivity: &sens, Confidence: &conf, Scope: &scope, Tags: tags,
		Provenance: &ProvenanceInput{Sources: slices.Clone(sources), CreatedBy: new(IngestActor)},
		Payload:    payload,
	}, c.now)
	if err != nil {
		// Every part was validated by BuildCapture; a failure here is a bug.
		panic("capture: derived " + string(t) + " record: " + err.Error())
	}
	return r
}

// extractMentions finds the entities content names (see mentionKeys),
// merging mentions that share a name or alias.
func extractMentions(content any, v *validator) []Mention {
	var out []Mention
	add := func(field, name, typ string, aliases []string) {
		name = strings.Join(strings.Fields(name), " ")
		if name == "" {
			return
		}
		if len(name) > MaxTermBytes {
			v.add(field, "an entity name exceeds %d bytes", MaxTermBytes)
			return
		}
		m := Mention{Name: name, Term: NormaliseTerm(name), Type: typ}
		for _, a := range aliases {
			if a = strings.Join(strings.Fields(a), " "); a != "" && !slices.Contains(m.terms(), NormaliseTerm(a)) {
				if len(a) > MaxTermBytes {
					v.add(field, "an alias exceeds %d bytes", MaxTermBytes)
					return
				}
				m.Aliases = append(m.Aliases, a)
			}
		}
		for i := range out {
			if shares(out[i].terms(), m.terms()) {
				for _, a := range append([]string{m.Name}, m.Aliases...) {
					if !slices.Contains(out[i].terms(), NormaliseTerm(a)) {
						out[i].Aliases = append(out[i].Aliases, a)
					}
				}
				return
			}
		}
		out = append(out, m)
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		keys := slices.Sorted(maps.Keys(m))
		for _, k := range keys {
			lk := strings.ToLower(k)
			typ, ok := mentionKeys[lk]
			if !ok && (strings.Contains(lk, "entity") || strings.Contains(lk, "entities")) {
				typ, ok = "Concept", true
			}
			if !ok {
				continue
			}
			field := prefix + k
			vals := []any{m[k]}
			if l, isList := m[k].([]any); isList {
				vals = l
			}
			for _, val := range vals {
				switch x := val.(type) {
				case string:
					add(field, x, typ, nil)
				case map[string]any:
					t := firstNonEmpty(str(x["type"]), str(x["primary_type"]), typ)
					add(field, firstNonEmpty(str(x["name"]), str(x["canonical_name"])), t, strList(x["aliases"]))
				}
			}
		}
	}
	if m, ok := content.(map[string]any); ok {
		walk("content.", m)
		if f, ok := m["fact"].(map[string]any); ok {
			walk("content.fact.", f)
		}
	}
	if len(out) > MaxMentions {
		v.add("content", "mentions %d entities (max %d)", len(out), MaxMentions)
	}
	return out
}

func shares(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// tripleOf returns the fact content carries (at the top level or under
// "fact"): a subject and predicate (non-empty strings) and an object.
func tripleOf(content any) *Triple {
	m, ok := content.(map[string]any)
	if !ok {
		return nil
	}
	for _, c := range []map[string]any{m, asMap(m["fact"])} {
		s, p := strings.TrimSpace(str(c["subject"])), strings.TrimSpace(str(c["predicate"]))
		if o, ok := c["object"]; ok && o != nil && s != "" && p != "" {
			return &Triple{Subject: s, Predicate: p, Object: o}
		}
	}
	return nil
}

// contentText is the text a capture is found by when it has neither a
// summary nor a reason: the content itself if it is text, its text,
// summary or message field, or else its JSON; at most 2000 bytes.
func contentText(content any) string {
	var s string
	switch c := content.(type) {
	case nil:
	case string:
		s = c
	case map[string]any:
		s = firstNonEmpty(str(c["text"]), str(c["summary"]), str(c["message"]))
		if s == "" {
			b, _ := json.Marshal(c)
			s = string(b)
		}
	default:
		b, _ := json.Marshal(c)
		s = string(b)
	}
	s = strings.TrimSpace(s)
	if len(s) > maxSummaryBytes {
		s = CutBytes(s, maxSummaryBytes) + "…"
	}
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

// either is content[key], or content[old] when key is absent: the API's
// spelling of a content key first, the one read before it second.
func either(content map[string]any, key, old string) any {
	if v, ok := content[key]; ok {
		return v
	}
	return content[old]
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strList(v any) []string {
	var out []string
	for _, e := range list(v) {
		if s := str(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// Captured is what a capture wrote.
type Captured struct {
	Primary *Record
	// Created are the entities and the fact created besides the primary.
	Created []*Record
	Edges   []Relation
	// Replayed is true when an idempotency key returned an earlier result:
	// its records when the request sees them in full, and those of its
	// edges whose ends the request may see (Trust.ReplayEdges).
	Replayed bool
}

// CaptureStore stores captures. Implemented by the neo4j package; the
// CaptureService is the application's way to it.
type CaptureStore interface {
	// Capture looks up the entities of c's scope named by c.Terms() that
	// the request sees in full, plans c against them and writes the plan,
	// all in one write transaction. Concurrent captures creating an entity
	// of the same name in the same scope are serialised, so the second
	// reuses the first's entity.
	Capture(ctx context.Context, idem *Idempotency, c *Capture, actor string) (*Captured, error)
}
