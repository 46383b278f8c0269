package membrane

import (
	"slices"
	"strconv"
	"strings"
)

// AnalysisVersion is the version of the search terms stored with each
// record (Memory.searchTermsVersion). Bump it whenever AnalyzeText or
// IndexText changes what a record is indexed under: the store then
// recomputes the terms of every record once at start (docs/retrieval.md).
//
// 2: the index entries begin with the record's ScopeToken.
const AnalysisVersion = 2

// SearchTerms is the full-text index entry of a payload: its IndexText's
// terms (AnalyzeText) joined by spaces, which the index splits on
// whitespace and nothing else.
func SearchTerms(p Payload) string {
	return strings.Join(AnalyzeText(IndexText(p)), " ")
}

// Bounds of the structured values (tool arguments and results, plan
// parameters…) whose keys and text leaves are indexed.
const (
	maxIndexDepth  = 4
	maxIndexLeaves = 256
)

// IndexText is every meaningful text of a payload, which a record is found
// by: the fields listed in docs/retrieval.md (identifiers like a thread id,
// a plan id or an event ref included; record ids of evidence, timestamps,
// numbers of statistics and tags left out: tags are matched by filters).
// Lines are in field order, so the terms are deterministic.
func IndexText(p Payload) string {
	var b indexText
	switch p := p.(type) {
	case *EpisodicPayload:
		b.add(p.SessionID)
		for _, e := range p.Timeline {
			b.add(e.EventKind, e.Ref, e.Summary)
		}
		for _, n := range p.ToolGraph {
			b.add(n.Tool)
			b.value(n.Args, 0)
			b.value(n.Result, 0)
		}
		if p.Outcome != nil {
			b.add(string(*p.Outcome))
		}
		b.add(p.Artifacts...)
		b.add(p.ToolGraphRef)
		if e := p.Environment; e != nil {
			b.add(e.OS, e.OSVersion, e.WorkingDirectory)
			b.value(e.ToolVersions, 0)
			b.value(e.Context, 0)
		}
	case *WorkingPayload:
		b.add(p.ThreadID, string(p.State), p.ContextSummary)
		b.add(p.NextActions...)
		b.add(p.OpenQuestions...)
		for _, c := range p.ActiveConstraints {
			b.add(c.Type, c.Key)
			b.value(c.Value, 0)
		}
	case *SemanticPayload:
		b.add(p.Subject, p.Predicate)
		b.value(p.Object, 0)
		if v := p.Validity; v != nil {
			b.value(v.Conditions, 0)
		}
	case *CompetencePayload:
		b.add(p.SkillName)
		for _, t := range p.Triggers {
			b.add(t.Signal)
			b.value(t.Conditions, 0)
		}
		for _, s := range p.Recipe {
			b.add(s.Step, s.Tool, s.Validation)
		}
		b.add(p.RequiredTools...)
		b.add(p.FailureModes...)
		b.add(p.Fallbacks...)
	case *PlanGraphPayload:
		b.add(p.PlanID, p.Intent)
		for _, n := range p.Nodes {
			b.add(n.Op)
			b.value(n.Params, 0)
		}
		b.value(p.Constraints, 0)
	case *EntityPayload:
		b.add(p.CanonicalName, p.PrimaryType)
		b.add(p.Types...)
		for _, a := range p.Aliases {
			b.add(a.Value)
		}
		for _, id := range p.Identifiers {
			b.add(id.Namespace, id.Value)
		}
		b.add(p.Summary)
	}
	return strings.Join(b.lines, "\n")
}

type indexText struct {
	lines  []string
	leaves int
}

func (b *indexText) add(s ...string) {
	for _, v := range s {
		if v != "" {
			b.lines = append(b.lines, v)
		}
	}
}

// value adds the keys and the string and number leaves of a JSON value
// (tool arguments, results, parameters), keys in sorted order, bounded in
// depth and leaves. Booleans and nulls say nothing by themselves.
func (b *indexText) value(v any, depth int) {
	if depth > maxIndexDepth || b.leaves >= maxIndexLeaves {
		return
	}
	switch v := v.(type) {
	case string:
		b.leaves++
		b.add(v)
	case float64:
		b.leaves++
		b.add(strconv.FormatFloat(v, 'f', -1, 64))
	case int64:
		b.leaves++
		b.add(strconv.FormatInt(v, 10))
	case int:
		b.leaves++
		b.add(strconv.Itoa(v))
	case []any:
		for _, x := range v {
			b.value(x, depth+1)
		}
	case []string:
		for _, x := range v {
			b.value(x, depth+1)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if b.leaves >= maxIndexLeaves {
				return
			}
			b.leaves++
			b.add(k)
			b.value(v[k], depth+1)
		}
	}
}
