package neo4j

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// recordProps returns the node properties of r as stored: plainProps,
// sealed when r is sensitive enough to be encrypted at rest.
func (db *DB) recordProps(r *membrane.Record) (map[string]any, error) {
	p, err := plainProps(r)
	if err != nil {
		return nil, err
	}
	return p, db.seal(r, p)
}

// plainProps returns the node properties of r in clear. Besides the record
// fields it has a few derived, read-only properties for analysts in Neo4j
// Browser (name, subject, canonicalName…) and the full-text index entry
// searchTerms (membrane.SearchTerms, of membrane.AnalysisVersion, after
// the record's membrane.ScopeToken, which retrieval restricts its query to).
func plainProps(r *membrane.Record) (map[string]any, error) {
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
		"caption":             membrane.DisplayName(r),
		"searchTerms":         membrane.IndexDocument(r.Scope, membrane.SearchTerms(r.Payload)),
		"searchTermsVersion":  int64(membrane.AnalysisVersion),
	}
	for k, v := range membrane.BrowserFields(r.Payload) {
		p[k] = v
	}
	if session, at, ok := membrane.SessionPosition(r); ok {
		// The session chain's lookup key (memory_session): sealed records
		// store neither (see seal), so they are in no chain.
		p["sessionKey"], p["sessionAt"] = session, at
	}
	if k, ok := membrane.KeyOf(r); ok {
		// Consolidation finds a fact by this digest (membrane.FactKey).
		p["factKey"] = k.Hash()
	}
	if c, ok := r.Payload.(*membrane.CompetencePayload); ok {
		// And a skill by this one (membrane.CompetenceKey).
		p["skillKey"] = membrane.CompetenceKey{SkillName: c.SkillName, Scope: r.Scope}.Hash()
	}
	return p, nil
}

// recordFromProps rebuilds a record from its node properties, opening
// sealed fields.
func (db *DB) recordFromProps(p map[string]any) (*membrane.Record, error) {
	if err := db.unseal(p); err != nil {
		return nil, err
	}
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

// auditProps returns the node properties of an audit entry; the free text
// (rationale, previous values) of a sensitive record's entry is sealed.
func (db *DB) auditProps(a *membrane.AuditEntry, sens membrane.Sensitivity) (map[string]any, error) {
	p, err := plainAuditProps(a)
	if err != nil {
		return nil, err
	}
	if db.sealer.Required(sens) {
		p["caption"] = auditCaption(a, "") // the detail is sealed
		for _, k := range []string{"rationale", "previous", "actorDetail"} {
			if s, ok := p[k].(string); ok && s != "" {
				if p[k], err = db.sealer.Seal([]byte(s), a.ID+"/"+k); err != nil {
					return nil, err
				}
			}
		}
	}
	return p, nil
}

func plainAuditProps(a *membrane.AuditEntry) (map[string]any, error) {
	p := map[string]any{
		"id":          a.ID,
		"recordId":    a.RecordID,
		"action":      string(a.Action),
		"actor":       a.Actor,
		"actorDetail": a.ActorDetail,
		"at":          a.Timestamp.UTC(),
		"rationale":   a.Rationale,
		"caption":     auditCaption(a, a.ActorDetail),
	}
	// Parallel lists, in clear: ids, roles and predicates are no more than
	// the graph's edges show; the level and scope copies let gating hide
	// the reference even after its record is deleted. Written on every
	// entry, empty ones included.
	roles, ids, preds, scopes := make([]string, len(a.Related)), make([]string, len(a.Related)), make([]string, len(a.Related)), make([]string, len(a.Related))
	levels := make([]int64, len(a.Related))
	for i, r := range a.Related {
		roles[i], ids[i], preds[i], levels[i], scopes[i] = string(r.Role), r.RecordID, string(r.Pred), int64(r.Level), r.Scope
	}
	p["refRoles"], p["refIds"], p["refPredicates"], p["refLevels"], p["refScopes"] = roles, ids, preds, levels, scopes
	if a.RelatedOmitted > 0 {
		p["refsOmitted"] = int64(a.RelatedOmitted)
	}
	if a.Previous != nil {
		// Status, version and salience before the change are also plain properties:
		// time-travel reads (asOf) undo changes with them in Cypher.
		if s, ok := a.Previous["status"]; ok {
			p["prevStatus"] = s
		}
		if s, ok := a.Previous["salience"]; ok {
			p["prevSalience"] = s
		}
		if s, ok := a.Previous["baseSalience"]; ok {
			p["prevBaseSalience"] = s
		}
		if v, ok := a.Previous["version"].(int64); ok {
			p["prevVersion"] = v
		}
		if s, ok := a.Previous["lastReinforcedAt"].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				p["prevAnchor"] = t.UTC()
			}
		}
		b, err := json.Marshal(a.Previous)
		if err != nil {
			return nil, fmt.Errorf("encode audit previous: %w", err)
		}
		p["previous"] = string(b)
	}
	return p, nil
}

// sealedCaption is the caption of a sealed record's node: its type and id
// only.
func sealedCaption(r *membrane.Record) string { return string(r.Type) + " " + r.ID }

// auditCaption is the caption of an audit entry's node in Neo4j Browser:
// what happened, who did it (the principal, and the detail it gave, such as
// the agent's name, when that is stored in clear) and when, to the second:
// "supersede by dev (agent-1) at 2026-05-01T10:00:00Z". Never the
// rationale nor a referenced record's id, which may name a record a Browser
// user should not learn of.
func auditCaption(a *membrane.AuditEntry, detail string) string {
	by := a.Actor
	if detail != "" {
		by += " (" + detail + ")"
	}
	return string(a.Action) + " by " + by + " at " + a.Timestamp.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// readAudit is auditFromProps for read paths: an entry whose sealed values
// do not open (its record's key is missing or changed) is returned
// redacted (membrane.RedactEntry: id, record id, action, time), so that it
// never fails a whole page nor a subscription's feed.
func (db *DB) readAudit(p map[string]any) (*membrane.AuditEntry, error) {
	a, err := db.auditFromProps(p)
	if !errors.Is(err, errUnopened) {
		return a, err
	}
	return membrane.RedactEntry(&membrane.AuditEntry{ID: str(p["id"]), RecordID: str(p["recordId"]),
		Action: membrane.AuditAction(str(p["action"])), Timestamp: tm(p["at"])}), nil
}

// auditFromProps rebuilds an audit entry from its node properties.
func (db *DB) auditFromProps(p map[string]any) (*membrane.AuditEntry, error) {
	for _, k := range []string{"rationale", "previous", "actorDetail"} {
		if s, ok := p[k].(string); ok && membrane.IsSealed(s) {
			plain, err := db.sealer.Open(s, str(p["id"])+"/"+k)
			if err != nil {
				return nil, fmt.Errorf("audit %s: %w: %w", str(p["id"]), errUnopened, err)
			}
			p[k] = string(plain)
		}
	}
	a := &membrane.AuditEntry{
		ID:          str(p["id"]),
		RecordID:    str(p["recordId"]),
		Action:      membrane.AuditAction(str(p["action"])),
		Actor:       str(p["actor"]),
		ActorDetail: str(p["actorDetail"]),
		Timestamp:   tm(p["at"]),
		Rationale:   str(p["rationale"]),
	}
	a.Related = auditRefs(p)
	a.RelatedOmitted = int(integer(p["refsOmitted"]))
	if s := str(p["previous"]); s != "" {
		if err := json.Unmarshal([]byte(s), &a.Previous); err != nil {
			return nil, fmt.Errorf("audit %s: decode previous: %w", a.ID, err)
		}
	}
	return a, nil
}

// auditRefs rebuilds an entry's references from its parallel lists, with
// the copies of their records' level and scope (refsNow adds the current).
func auditRefs(p map[string]any) []membrane.AuditRef {
	ids := strs(p["refIds"])
	if len(ids) == 0 {
		return nil
	}
	roles, preds, scopes := strs(p["refRoles"]), strs(p["refPredicates"]), strs(p["refScopes"])
	levels, _ := p["refLevels"].([]any)
	out := make([]membrane.AuditRef, len(ids))
	for i, id := range ids {
		r := membrane.AuditRef{RecordID: id, Level: membrane.UnknownLevel}
		if i < len(roles) {
			r.Role = membrane.AuditRefRole(roles[i])
		}
		if i < len(preds) {
			r.Pred = membrane.Predicate(preds[i])
		}
		if i < len(levels) && i < len(scopes) {
			r.Level, r.Scope = int(integer(levels[i])), scopes[i]
		}
		out[i] = r
	}
	return out
}

// refsNow makes the references of entries gate on their records' current
// level and scope too, for the records that still exist (one more
// statement in tx, only when there are references): the stricter of the
// copy and the record now wins, and a record whose scope changed is shown
// to nobody. Gating then follows relations, which read the record now.
func refsNow(ctx context.Context, tx neo4j.ManagedTransaction, entries []*membrane.AuditEntry) error {
	var ids []string
	for _, a := range entries {
		for _, r := range a.Related {
			ids = append(ids, r.RecordID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	rows, err := collect(ctx, tx, cypher.Must("records_visibility"), map[string]any{"ids": slices.Compact(ids)})
	if err != nil {
		return err
	}
	now := make(map[string][2]any, len(rows))
	for _, row := range rows {
		now[str(row.Values[0])] = [2]any{row.Values[1], row.Values[2]}
	}
	for _, a := range entries {
		for i, r := range a.Related {
			cur, ok := now[r.RecordID]
			if !ok {
				continue
			}
			r.Level = max(r.Level, int(integer(cur[0])))
			if str(cur[1]) != r.Scope {
				r.Level = membrane.UnknownLevel
			}
			a.Related[i] = r
		}
	}
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// number reads a numeric property, which Neo4j returns as an int64 or a
// float64 whichever was stored, as T (0 for anything else).
func number[T int64 | float64](v any) T {
	switch x := v.(type) {
	case int64:
		return T(x)
	case float64:
		return T(x)
	}
	return 0
}

func float(v any) float64 { return number[float64](v) }

func integer(v any) int64 { return number[int64](v) }

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

// Properties of a sensitive record that hold free text: sealed at rest.
var sealedProps = []string{"payload", "provenanceSources"}

// seal encrypts p's free text in place when r is sensitive enough: payload,
// provenance and contest evidence are sealed, and the derived text copies
// (name, searchTerms, subject…) are not stored at all, so Neo4j Browser, a
// backup or a stolen disk shows only non-sensitive fields. p may hold a
// subset of the properties (an update).
func (db *DB) seal(r *membrane.Record, p map[string]any) error {
	if !db.sealer.Required(r.Sensitivity) {
		if _, ok := p["sensitivity"]; ok {
			// Only sealed records have blind terms and the encrypted
			// mark (a record whose sensitivity was lowered loses them).
			p["blindTerms"], p["blindKeyId"], p["blindTermsVersion"], p["encrypted"] = nil, nil, nil, nil
			p["blindNames"], p["digestKeyId"] = nil, nil
		}
		return nil
	}
	if err := db.blindTerms(r, p); err != nil {
		return err
	}
	db.keyedDigests(r, p)
	p["encrypted"] = true
	for _, k := range sealedProps {
		if s, ok := p[k].(string); ok {
			sealed, err := db.sealer.Seal([]byte(s), r.ID+"/"+k)
			if err != nil {
				return err
			}
			p[k] = sealed
		}
	}
	if ev, ok := p["contestEvidence"].([]string); ok {
		sealed := make([]string, len(ev))
		for i, e := range ev {
			var err error
			if sealed[i], err = db.sealer.Seal([]byte(e), r.ID+"/contestEvidence"); err != nil {
				return err
			}
		}
		p["contestEvidence"] = sealed
	}
	if _, ok := p["sourceRefs"]; ok {
		p["sourceRefs"] = []string{}
	}
	if _, ok := p["name"]; ok {
		p["name"] = string(r.Type) + " (encrypted)"
	}
	if _, ok := p["caption"]; ok {
		// Browser's caption (docs/data-model.md): the type and id, which
		// the node shows in clear anyway, nothing of the sealed text.
		p["caption"] = sealedCaption(r)
	}
	if _, ok := p["searchTerms"]; ok {
		// No plaintext terms: a sealed record's terms would spell out its
		// text. It is found by the keyed blind index instead (its own
		// property, written here beside this one).
		p["searchTerms"] = ""
	}
	// Copied-out free text goes; enums and counts (outcome, toolCalls,
	// taskState, performance) stay, so consolidation and metrics still
	// see sensitive records.
	for _, k := range freeTextProps {
		if _, ok := p[k]; ok {
			p[k] = nil // SET += removes properties set to null
		}
	}
	return nil
}

// blindTerms sets p's blindTerms (the keyed tokens of the record's
// analysed terms, membrane.Sealer.BlindTerms), blindKeyId and
// blindTermsVersion when p writes any of what they derive from: the
// payload, its search terms, or the sensitivity (a record becoming sealed).
// The terms are those memory_terms would hold in clear
// (membrane.SearchTerms: AnalyzeText of IndexText), computed from r in the
// transaction of the write, so that the blind index never lags the text. A
// record without terms stores none.
func (db *DB) blindTerms(r *membrane.Record, p map[string]any) error {
	touched := false
	for _, k := range []string{"payload", "sensitivity", "searchTerms"} {
		if _, ok := p[k]; ok {
			touched = true
		}
	}
	if !touched {
		return nil
	}
	doc, keyID, ok := db.sealer.BlindTerms(membrane.AnalyzeText(membrane.IndexText(r.Payload)))
	if !ok {
		p["blindTerms"], p["blindKeyId"], p["blindTermsVersion"] = nil, nil, nil
		return nil
	}
	// After the scope token, as in memory_terms (membrane.IndexDocument):
	// the scope is stored in clear on the node anyway.
	p["blindTerms"], p["blindKeyId"], p["blindTermsVersion"] = membrane.IndexDocument(r.Scope, doc), keyID, int64(membrane.AnalysisVersion)
	return nil
}

// keyedDigests replaces the lookup digests p writes (factKey, skillKey) by
// keyed ones under the active key, and gives a sealed entity whose payload
// p writes its blindNames (the keyed digests of its names, which capture
// resolves it by instead of plaintext terms), with digestKeyId, the key
// they were computed under. An unkeyed digest of a sealed fact's or skill's
// fields would let someone holding the database confirm a guess of them.
func (db *DB) keyedDigests(r *membrane.Record, p map[string]any) {
	keyed := false
	if _, ok := p["factKey"]; ok {
		if k, ok := membrane.KeyOf(r); ok {
			p["factKey"], _, keyed = db.sealer.ActiveDigest(membrane.DigestFact, k.Fields()...)
		}
	}
	if _, ok := p["skillKey"]; ok {
		if k, ok := membrane.KeyOfCompetence(r); ok {
			p["skillKey"], _, keyed = db.sealer.ActiveDigest(membrane.DigestSkill, k.Fields()...)
		}
	}
	if _, ok := p["payload"]; ok {
		if e, ok := r.Payload.(*membrane.EntityPayload); ok {
			p["blindNames"], _, keyed = db.sealer.EntityNameDigests(r.Scope, e)
		}
	}
	if keyed {
		p["digestKeyId"] = db.sealer.Active()
	}
}

// freeTextProps are the payload fields copied out as properties that hold
// free text, which a sensitive record does not store in clear. The session
// (sessionKey) is one, and its position (sessionAt) goes with it: a sealed
// episode is in no session chain.
var freeTextProps = []string{"subject", "predicate", "object", "threadId", "skillName", "planId", "intent", "canonicalName", "terms",
	"sessionKey", "sessionAt"}

// unseal opens p's sealed properties in place.
func (db *DB) unseal(p map[string]any) error {
	id := str(p["id"])
	for _, k := range sealedProps {
		if s, ok := p[k].(string); ok && membrane.IsSealed(s) {
			plain, err := db.sealer.Open(s, id+"/"+k)
			if err != nil {
				return unopenedError(id, err)
			}
			p[k] = string(plain)
		}
	}
	if ev, ok := p["contestEvidence"].([]any); ok {
		// A copy: the list read may be a revision's guard (revise.go).
		ev = slices.Clone(ev)
		p["contestEvidence"] = ev
		for i, e := range ev {
			if s, ok := e.(string); ok && membrane.IsSealed(s) {
				plain, err := db.sealer.Open(s, id+"/contestEvidence")
				if err != nil {
					return unopenedError(id, err)
				}
				ev[i] = string(plain)
			}
		}
	}
	return nil
}

// errUnopened is membrane.ErrUnopened.
var errUnopened = membrane.ErrUnopened

// unopenedError is the error of record id whose sealed value did not open
// (err): FAILED_PRECONDITION for a caller (a revision of it), with
// errUnopened for the read paths and the re-index that pass over it.
func unopenedError(id string, err error) error {
	return fmt.Errorf("%w: %w: %w", membrane.Errorf(membrane.EPRECONDITION,
		"record %q is sealed under an encryption key this server does not hold", id), errUnopened, err)
}

// readRecord is recordFromProps for read paths, whose result is then gated
// (view): a record whose sealed values do not open is returned redacted
// (its clear metadata, no payload: docs/operations.md, "Unknown keys"), so
// that it never fails a whole page; the gate then shows it redacted to a
// request that would see it in full or redacted, and not at all to others.
func (db *DB) readRecord(props map[string]any) (*membrane.Record, error) {
	r, err := db.recordFromProps(props)
	if !errors.Is(err, errUnopened) {
		return r, err
	}
	meta := make(map[string]any, len(props))
	for k, v := range props {
		meta[k] = v
	}
	meta["payload"], meta["provenanceSources"], meta["contestEvidence"] = "{}", "", nil
	if r, err = db.recordFromProps(meta); err != nil {
		return nil, err
	}
	return membrane.Redact(r), nil
}

// visibleRows decodes the record in the first column of each row (one
// that does not open, redacted: readRecord), stamps each record with the
// instant it was read as of, and returns them as the request may see them,
// leaving out the invisible.
func (db *DB) visibleRows(ctx context.Context, rows []*neo4j.Record, asOf *time.Time) ([]*membrane.Record, error) {
	recs, err := db.readRows(rows)
	if err != nil {
		return nil, err
	}
	out := recs[:0]
	for _, r := range recs {
		r.AsOf = asOf
		if r = view(ctx, r); r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// readRows decodes the record in the first column of each row (one that
// does not open, redacted: readRecord).
func (db *DB) readRows(rows []*neo4j.Record) ([]*membrane.Record, error) {
	out := make([]*membrane.Record, len(rows))
	for i, row := range rows {
		props, _ := row.Values[0].(map[string]any)
		r, err := db.readRecord(props)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
