package membrane

import (
	"fmt"
	"time"

	"github.com/google/uuid"
)

// NewID returns a new time-ordered record or audit id (UUIDv7), so ids sort
// roughly by creation and index pages stay local.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does.
		panic(fmt.Sprintf("uuid: %v", err))
	}
	return id.String()
}

// BuildRecord turns a RecordInput into a validated record created at now,
// with the policy's defaults for everything the input leaves out.
func (p Policy) BuildRecord(in RecordInput, now time.Time) (*Record, error) {
	v := &validator{}
	payloads := in.Payload.payloads()
	switch {
	case len(payloads) == 0:
		v.add("payload", "is required: set the field matching the record type")
		return nil, v.err()
	case len(payloads) > 1:
		v.add("payload", "must set exactly one payload, got %d", len(payloads))
		return nil, v.err()
	}
	now = now.UTC()
	r := &Record{
		ID:          NewID(),
		Type:        in.Type,
		Sensitivity: p.DefaultSensitivity,
		Confidence:  1.0,
		Salience:    1.0,
		Tags:        normaliseTags(in.Tags),
		CreatedAt:   now,
		UpdatedAt:   now,
		Status:      StatusActive,
		Lifecycle:   p.DefaultLifecycle(in.Type, now),
		Payload:     payloads[0],
		Version:     1,
	}
	if in.ID != nil {
		r.ID = *in.ID
	}
	if in.Sensitivity != nil {
		r.Sensitivity = *in.Sensitivity
	}
	if in.Confidence != nil {
		r.Confidence = *in.Confidence
	}
	if in.Salience != nil {
		r.Salience = *in.Salience
	}
	if in.Scope != nil {
		r.Scope = *in.Scope
	}
	if lc := in.Lifecycle; lc != nil {
		d := &r.Lifecycle
		setIf(&d.Curve, lc.Curve)
		setIf(&d.HalfLifeSeconds, lc.HalfLifeSeconds)
		setIf(&d.MinSalience, lc.MinSalience)
		setIf(&d.MaxAgeSeconds, lc.MaxAgeSeconds)
		setIf(&d.ReinforcementGain, lc.ReinforcementGain)
		setIf(&r.Lifecycle.Pinned, lc.Pinned)
		setIf(&r.Lifecycle.DeletionPolicy, lc.DeletionPolicy)
	}
	if pv := in.Provenance; pv != nil {
		r.Provenance.Sources = pv.Sources
		setIf(&r.Provenance.CreatedBy, pv.CreatedBy)
	}
	// A new record's decay starts now, from the salience it is created with.
	r.Lifecycle.BaseSalience = r.Salience
	if e, ok := r.Payload.(*EntityPayload); ok && e.PrimaryType == "" {
		e.PrimaryType = "Other"
	}
	validateRecord(r, v)
	if err := v.err(); err != nil {
		return nil, err
	}
	return r, nil
}

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// normaliseTags drops duplicate tags, keeping the first occurrence's order.
// Tags are matched exactly, so "a" and "a" twice are one tag.
func normaliseTags(tags []string) []string {
	if len(tags) == 0 {
		return []string{}
	}
	seen := make(map[string]bool, len(tags))
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// NewAuditEntry returns an audit entry for record id at now.
func NewAuditEntry(recordID string, action AuditAction, actor, rationale string, now time.Time) *AuditEntry {
	return &AuditEntry{
		ID:        NewID(),
		RecordID:  recordID,
		Action:    action,
		Actor:     actor,
		Timestamp: now.UTC(),
		Rationale: rationale,
	}
}
