package membrane

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// validator collects field errors so that one response names every problem.
type validator struct {
	prefix string
	errs   []FieldError
}

func (v *validator) add(field, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Field: v.prefix + field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error {
	if len(v.errs) == 0 {
		return nil
	}
	msg := v.errs[0].Field + ": " + v.errs[0].Message
	if n := len(v.errs); n > 1 {
		msg += fmt.Sprintf(" (and %d more)", n-1)
	}
	return &Error{Code: EINVALID, Message: "invalid input: " + msg, Fields: v.errs}
}

func (v *validator) str(field, s string, required bool) {
	if required && s == "" {
		v.add(field, "is required")
	}
	if len(s) > MaxStringBytes {
		v.add(field, "exceeds %d bytes", MaxStringBytes)
	}
}

func (v *validator) unit(field string, f float64) {
	if math.IsNaN(f) || f < 0 || f > 1 {
		v.add(field, "must be between 0 and 1")
	}
}

func (v *validator) tags(field string, tags []string) {
	if len(tags) > MaxTags {
		v.add(field, "too many tags: %d (max %d)", len(tags), MaxTags)
		return
	}
	for i, t := range tags {
		switch {
		case t == "":
			v.add(field+"["+strconv.Itoa(i)+"]", "must not be empty")
		case len(t) > MaxTagBytes:
			v.add(field+"["+strconv.Itoa(i)+"]", "tag exceeds maximum length of %d", MaxTagBytes)
		}
	}
}

// json checks free-form JSON: size, depth, string lengths and numbers.
func (v *validator) json(field string, val any) {
	if val == nil {
		return
	}
	b, err := json.Marshal(val)
	if err != nil {
		v.add(field, "is not valid JSON: %v", err)
		return
	}
	if len(b) > MaxPayloadBytes {
		v.add(field, "exceeds maximum payload size of %d bytes", MaxPayloadBytes)
		return
	}
	v.walk(field, val, 0)
}

func (v *validator) walk(field string, val any, depth int) {
	if depth > MaxJSONDepth {
		v.add(field, "is nested deeper than %d levels", MaxJSONDepth)
		return
	}
	switch x := val.(type) {
	case string:
		if len(x) > MaxStringBytes {
			v.add(field, "exceeds %d bytes", MaxStringBytes)
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			v.add(field, "must be a finite number")
		}
	case json.Number:
		// Decoded requests keep numbers as text; one that overflows float64
		// could be stored but never read back.
		if f, err := x.Float64(); err != nil || math.IsInf(f, 0) {
			v.add(field, "must be a finite number within float64 range")
		}
	case map[string]any:
		for k, e := range x {
			if len(k) > MaxStringBytes {
				v.add(field, "has a key longer than %d bytes", MaxStringBytes)
			}
			v.walk(field+"."+k, e, depth+1)
		}
	case []any:
		for i, e := range x {
			v.walk(field+"["+strconv.Itoa(i)+"]", e, depth+1)
		}
	}
}

// oneOf checks that val is one of values, which the message names.
func oneOf[T ~string](v *validator, field string, val T, values enum[T]) {
	if !values.has(val) {
		v.add(field, "must be one of: %s", values)
	}
}

// nodeID checks the id of a graph's node (what names its kind in the
// message): required, and not one of seen, the ids of the nodes before it,
// to which it is added.
func (v *validator) nodeID(field, id, what string, seen map[string]bool) {
	v.str(field, id, true)
	if seen[id] {
		v.add(field, "duplicate %s id %q", what, id)
	}
	seen[id] = true
}

// ids checks a list of record or node ids: each is required (not blank:
// an id of spaces names nothing) and bounded like any string.
func (v *validator) ids(field string, ids []string) {
	for i, id := range ids {
		f := field + "[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(id) == "" {
			v.add(f, "must not be blank")
			continue
		}
		v.str(f, id, false)
	}
}

func (v *validator) strs(field string, ss []string) {
	for i, s := range ss {
		v.str(field+"["+strconv.Itoa(i)+"]", s, false)
	}
}

// validateRecord checks a fully built record. Every write path ends here, so
// the storage layer never sees an invalid record.
func validateRecord(r *Record, v *validator) {
	if r.ID == "" || len(r.ID) > 256 {
		v.add("id", "must be 1 to 256 bytes")
	}
	oneOf(v, "type", r.Type, MemoryTypes)
	oneOf(v, "sensitivity", r.Sensitivity, Sensitivities)
	v.unit("confidence", r.Confidence)
	if !(r.Salience >= 0 && r.Salience <= MaxSalience) { // NaN fails both
		v.add("salience", "must be between 0 and %s", ftoa(MaxSalience))
	}
	v.str("scope", r.Scope, false)
	v.tags("tags", r.Tags)
	oneOf(v, "status", r.Status, RevisionStatuses)
	lc := r.Lifecycle
	oneOf(v, "lifecycle.curve", lc.Curve, decayCurves)
	if lc.HalfLifeSeconds < 1 {
		v.add("lifecycle.halfLifeSeconds", "must be >= 1")
	}
	v.unit("lifecycle.minSalience", lc.MinSalience)
	if lc.MaxAgeSeconds < 0 {
		v.add("lifecycle.maxAgeSeconds", "must be >= 0")
	}
	v.unit("lifecycle.reinforcementGain", lc.ReinforcementGain)
	oneOf(v, "lifecycle.deletionPolicy", lc.DeletionPolicy, deletionPolicies)
	v.str("provenance.createdBy", r.Provenance.CreatedBy, false)
	for i, s := range r.Provenance.Sources {
		f := "provenance.sources[" + strconv.Itoa(i) + "]."
		oneOf(v, f+"kind", s.Kind, provenanceKinds)
		v.str(f+"ref", s.Ref, true)
		v.str(f+"hash", s.Hash, false)
		v.str(f+"createdBy", s.CreatedBy, false)
	}
	if r.Payload == nil {
		v.add("payload", "is required")
		return
	}
	if r.Payload.Kind() != r.Type {
		v.add("payload", "payload kind %s does not match type %s", r.Payload.Kind(), r.Type)
		return
	}
	validatePayload(r.Payload, v)
}

func validatePayload(p Payload, v *validator) {
	switch p := p.(type) {
	case *EpisodicPayload:
		for i, e := range p.Timeline {
			f := "payload.timeline[" + strconv.Itoa(i) + "]."
			v.str(f+"eventKind", e.EventKind, true)
			v.str(f+"ref", e.Ref, false)
			v.str(f+"summary", e.Summary, false)
		}
		ids := map[string]bool{}
		for i, n := range p.ToolGraph {
			f := "payload.toolGraph[" + strconv.Itoa(i) + "]."
			v.nodeID(f+"id", n.ID, "tool node", ids)
			v.str(f+"tool", n.Tool, true)
			v.json(f+"args", n.Args)
			v.json(f+"result", n.Result)
			v.ids(f+"dependsOn", n.DependsOn)
		}
		if p.Outcome != nil {
			oneOf(v, "payload.outcome", *p.Outcome, outcomeStatuses)
		}
		if e := p.Environment; e != nil {
			v.str("payload.environment.os", e.OS, false)
			v.str("payload.environment.osVersion", e.OSVersion, false)
			v.str("payload.environment.workingDirectory", e.WorkingDirectory, false)
			v.json("payload.environment.toolVersions", e.ToolVersions)
			v.json("payload.environment.context", e.Context)
		}
		v.strs("payload.artifacts", p.Artifacts)
		v.str("payload.toolGraphRef", p.ToolGraphRef, false)
		v.str("payload.sessionId", p.SessionID, false)
	case *WorkingPayload:
		v.str("payload.threadId", p.ThreadID, true)
		oneOf(v, "payload.state", p.State, taskStates)
		for i, c := range p.ActiveConstraints {
			f := "payload.activeConstraints[" + strconv.Itoa(i) + "]."
			v.str(f+"type", c.Type, true)
			v.str(f+"key", c.Key, true)
			v.json(f+"value", c.Value)
		}
		v.strs("payload.nextActions", p.NextActions)
		v.strs("payload.openQuestions", p.OpenQuestions)
		v.str("payload.contextSummary", p.ContextSummary, false)
	case *SemanticPayload:
		v.str("payload.subject", p.Subject, true)
		v.str("payload.predicate", p.Predicate, true)
		v.json("payload.object", p.Object)
		if val := p.Validity; val != nil {
			oneOf(v, "payload.validity.mode", val.Mode, validityModes)
			v.json("payload.validity.conditions", val.Conditions)
			if val.Start != nil && val.End != nil && val.End.Before(*val.Start) {
				v.add("payload.validity.end", "must not be before start")
			}
		}
		for i, e := range p.Evidence {
			f := "payload.evidence[" + strconv.Itoa(i) + "]."
			v.str(f+"sourceType", e.SourceType, true)
			v.str(f+"sourceId", e.SourceID, true)
		}
		v.str("payload.revisionPolicy", p.RevisionPolicy, false)
	case *CompetencePayload:
		v.str("payload.skillName", p.SkillName, true)
		for i, t := range p.Triggers {
			f := "payload.triggers[" + strconv.Itoa(i) + "]."
			v.str(f+"signal", t.Signal, true)
			v.json(f+"conditions", t.Conditions)
		}
		for i, s := range p.Recipe {
			f := "payload.recipe[" + strconv.Itoa(i) + "]."
			v.str(f+"step", s.Step, true)
			v.str(f+"tool", s.Tool, false)
			v.json(f+"argsSchema", s.ArgsSchema)
			v.str(f+"validation", s.Validation, false)
		}
		v.strs("payload.requiredTools", p.RequiredTools)
		v.strs("payload.failureModes", p.FailureModes)
		v.strs("payload.fallbacks", p.Fallbacks)
		if ps := p.Performance; ps != nil {
			if ps.SuccessCount < 0 || ps.FailureCount < 0 {
				v.add("payload.performance", "counts must be >= 0")
			}
			v.unit("payload.performance.successRate", ps.SuccessRate)
			if math.IsNaN(ps.AvgLatencyMs) || math.IsInf(ps.AvgLatencyMs, 0) || ps.AvgLatencyMs < 0 {
				v.add("payload.performance.avgLatencyMs", "must be a finite number >= 0")
			}
		}
		v.str("payload.version", p.Version, false)
	case *PlanGraphPayload:
		v.str("payload.planId", p.PlanID, true)
		v.str("payload.version", p.Version, false)
		v.str("payload.intent", p.Intent, false)
		v.json("payload.constraints", p.Constraints)
		v.json("payload.inputsSchema", p.InputsSchema)
		v.json("payload.outputsSchema", p.OutputsSchema)
		ids := map[string]bool{}
		for i, n := range p.Nodes {
			f := "payload.nodes[" + strconv.Itoa(i) + "]."
			v.nodeID(f+"id", n.ID, "node", ids)
			v.str(f+"op", n.Op, true)
			v.json(f+"params", n.Params)
			v.json(f+"guards", n.Guards)
		}
		for i, e := range p.Edges {
			f := "payload.edges[" + strconv.Itoa(i) + "]."
			if !ids[e.From] {
				v.add(f+"from", "names no node of this plan")
			}
			if !ids[e.To] {
				v.add(f+"to", "names no node of this plan")
			}
			oneOf(v, f+"kind", e.Kind, edgeKinds)
		}
		if m := p.Metrics; m != nil {
			v.unit("payload.metrics.failureRate", m.FailureRate)
			if m.ExecutionCount < 0 {
				v.add("payload.metrics.executionCount", "must be >= 0")
			}
		}
	case *EntityPayload:
		v.str("payload.canonicalName", p.CanonicalName, true)
		v.str("payload.primaryType", p.PrimaryType, true)
		v.strs("payload.types", p.Types)
		for i, a := range p.Aliases {
			f := "payload.aliases[" + strconv.Itoa(i) + "]."
			v.str(f+"value", a.Value, true)
			v.str(f+"kind", a.Kind, false)
			v.str(f+"locale", a.Locale, false)
		}
		for i, id := range p.Identifiers {
			f := "payload.identifiers[" + strconv.Itoa(i) + "]."
			v.str(f+"namespace", id.Namespace, true)
			v.str(f+"value", id.Value, true)
		}
		v.str("payload.summary", p.Summary, false)
	}
	if b, err := json.Marshal(p); err != nil {
		v.add("payload", "cannot be encoded as JSON: %v", err)
	} else if len(b) > MaxPayloadBytes {
		v.add("payload", "exceeds maximum payload size of %d bytes", MaxPayloadBytes)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
