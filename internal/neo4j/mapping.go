package neo4j

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// recordProps returns the node properties of r. Besides the record fields
// it writes a few derived, read-only properties for analysts in Neo4j
// Browser (name, subject, canonicalName…) and the full-text searchText.
func recordProps(r *membrane.Record) (map[string]any, error) {
	payload, err := membrane.EncodePayload(r.Payload)
	if err != nil {
		return nil, err
	}
	sources, err := json.Marshal(r.Provenance.Sources)
	if err != nil {
		return nil, fmt.Errorf("encode provenance: %w", err)
	}
	refs := make([]string, 0, len(r.Provenance.Sources))
	for _, s := range r.Provenance.Sources {
		refs = append(refs, s.Ref)
	}
	p := map[string]any{
		"id":                  r.ID,
		"type":                string(r.Type),
		"sensitivity":         string(r.Sensitivity),
		"sensitivityLevel":    int64(r.Sensitivity.Level()),
		"confidence":          r.Confidence,
		"salience":            r.Salience,
		"scope":               r.Scope,
		"tags":                nonNil(r.Tags),
		"createdAt":           r.CreatedAt.UTC(),
		"updatedAt":           r.UpdatedAt.UTC(),
		"status":              string(r.Status),
		"version":             r.Version,
		"decayCurve":          string(r.Lifecycle.Curve),
		"halfLifeSeconds":     r.Lifecycle.HalfLifeSeconds,
		"minSalience":         r.Lifecycle.MinSalience,
		"maxAgeSeconds":       r.Lifecycle.MaxAgeSeconds,
		"reinforcementGain":   r.Lifecycle.ReinforcementGain,
		"lastReinforcedAt":    r.Lifecycle.LastReinforcedAt.UTC(),
		"baseSalience":        r.Lifecycle.BaseSalience,
		"compressions":        r.Lifecycle.Compressions,
		"pinned":              r.Lifecycle.Pinned,
		"deletionPolicy":      string(r.Lifecycle.DeletionPolicy),
		"provenanceCreatedBy": r.Provenance.CreatedBy,
		"provenanceSources":   string(sources),
		"sourceRefs":          refs,
		"payload":             string(payload),
		"contestEvidence":     nonNil(r.ContestEvidence),
		"name":                membrane.DisplayName(r),
		"searchText":          membrane.SearchText(r.Payload),
	}
	for k, v := range membrane.BrowserFields(r.Payload) {
		p[k] = v
	}
	if k, ok := membrane.KeyOf(r); ok {
		// Consolidation finds a fact by this digest (membrane.FactKey).
		p["factKey"] = k.Hash()
	}
	return p, nil
}

// recordFromProps rebuilds a record from its node properties.
func recordFromProps(p map[string]any) (*membrane.Record, error) {
	r := &membrane.Record{
		ID:              str(p["id"]),
		Type:            membrane.MemoryType(str(p["type"])),
		Sensitivity:     membrane.Sensitivity(str(p["sensitivity"])),
		Confidence:      float(p["confidence"]),
		Salience:        float(p["salience"]),
		Scope:           str(p["scope"]),
		Tags:            strs(p["tags"]),
		CreatedAt:       tm(p["createdAt"]),
		UpdatedAt:       tm(p["updatedAt"]),
		Status:          membrane.RevisionStatus(str(p["status"])),
		Version:         integer(p["version"]),
		ContestEvidence: strs(p["contestEvidence"]),
		Lifecycle: membrane.Lifecycle{
			Curve:             membrane.DecayCurve(str(p["decayCurve"])),
			HalfLifeSeconds:   integer(p["halfLifeSeconds"]),
			MinSalience:       float(p["minSalience"]),
			MaxAgeSeconds:     integer(p["maxAgeSeconds"]),
			ReinforcementGain: float(p["reinforcementGain"]),
			LastReinforcedAt:  tm(p["lastReinforcedAt"]),
			Compressions:      integer(p["compressions"]),
			Pinned:            p["pinned"] == true,
			DeletionPolicy:    membrane.DeletionPolicy(str(p["deletionPolicy"])),
		},
		Provenance: membrane.Provenance{CreatedBy: str(p["provenanceCreatedBy"])},
	}
	if b, ok := p["baseSalience"]; ok {
		r.Lifecycle.BaseSalience = float(b)
	} else {
		// Records written before the base existed were never swept: their
		// stored salience is still the value at their anchor.
		r.Lifecycle.BaseSalience = r.Salience
	}
	if s := str(p["provenanceSources"]); s != "" {
		if err := json.Unmarshal([]byte(s), &r.Provenance.Sources); err != nil {
			return nil, fmt.Errorf("record %s: decode provenance: %w", r.ID, err)
		}
	}
	if r.Provenance.Sources == nil {
		r.Provenance.Sources = []membrane.ProvenanceSource{}
	}
	payload, err := membrane.DecodePayload(r.Type, []byte(str(p["payload"])))
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", r.ID, err)
	}
	r.Payload = payload
	return r, nil
}

// auditProps returns the node properties of an audit entry.
func auditProps(a *membrane.AuditEntry) (map[string]any, error) {
	p := map[string]any{
		"id":        a.ID,
		"recordId":  a.RecordID,
		"action":    string(a.Action),
		"actor":     a.Actor,
		"at":        a.Timestamp.UTC(),
		"rationale": a.Rationale,
	}
	if len(a.RemovedEdges) > 0 {
		p["removedEdges"] = a.RemovedEdges
	}
	if a.Previous != nil {
		// Status and salience before the change are also plain properties:
		// time-travel reads (asOf) undo changes with them in Cypher.
		if s, ok := a.Previous["status"]; ok {
			p["prevStatus"] = s
		}
		if s, ok := a.Previous["salience"]; ok {
			p["prevSalience"] = s
		}
		b, err := json.Marshal(a.Previous)
		if err != nil {
			return nil, fmt.Errorf("encode audit previous: %w", err)
		}
		p["previous"] = string(b)
	}
	return p, nil
}

// auditFromProps rebuilds an audit entry from its node properties.
func auditFromProps(p map[string]any) (*membrane.AuditEntry, error) {
	a := &membrane.AuditEntry{
		ID:        str(p["id"]),
		RecordID:  str(p["recordId"]),
		Action:    membrane.AuditAction(str(p["action"])),
		Actor:     str(p["actor"]),
		Timestamp: tm(p["at"]),
		Rationale: str(p["rationale"]),
	}
	if e, ok := p["removedEdges"]; ok {
		a.RemovedEdges = strs(e)
	}
	if s := str(p["previous"]); s != "" {
		if err := json.Unmarshal([]byte(s), &a.Previous); err != nil {
			return nil, fmt.Errorf("audit %s: decode previous: %w", a.ID, err)
		}
	}
	return a, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func float(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}

func integer(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func tm(v any) time.Time {
	t, _ := v.(time.Time)
	return t.UTC()
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, str(e))
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
