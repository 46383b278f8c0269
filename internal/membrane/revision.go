package membrane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/google/uuid"
	"math"
	"slices"
	"strings"
	"time"
)

// RevisionMeta is what every revision takes besides its own arguments.
type RevisionMeta struct {
	// Actor is the principal's actor id; ActorDetail the caller's free text.
	Actor       string
	ActorDetail string
	Rationale   string
	// ExpectedVersion, when set, must equal the target's current version
	// (optimistic concurrency); otherwise the revision fails with ECONFLICT.
	ExpectedVersion *int64
}

func (m RevisionMeta) validate(v *validator) {
	v.str("actor", m.Actor, true)
	if len(m.Actor) > 256 {
		v.add("actor", "exceeds 256 bytes")
	}
	v.str("rationale", m.Rationale, false)
	if len(m.ActorDetail) > 256 {
		v.add("actor", "exceeds 256 bytes")
	}
}

// entry returns an audit entry by m's actor.
func (m RevisionMeta) entry(recordID string, action AuditAction, rationale string, now time.Time) *AuditEntry {
	a := NewAuditEntry(recordID, action, m.Actor, rationale, now)
	a.ActorDetail = m.ActorDetail
	return a
}

// Change is what one revision writes, planned from the records it read. The
// store applies a Change in one transaction: all of it or nothing.
type Change struct {
	// Creates are new records.
	Creates []*Record
	// Updates are the next states of records that were read (and locked).
	Updates []*Record
	// Touched are ids of records that get only an audit entry.
	Touched []string
	Edges   []Relation
	Audits  []*AuditEntry
	// Result is the record the operation returns.
	Result *Record
	// Embeddings are vectors of created records, by record id (vector
	// search; absent without an embedder).
	Embeddings map[string][]float64
	// EmbeddingModel names the model of Embeddings.
	EmbeddingModel string
}

// checkTarget applies the guards every revision shares.
func checkTarget(r *Record, op string, meta *RevisionMeta) error {
	if r.Type == TypeEpisodic {
		return Errorf(EPRECONDITION, "episodic records are immutable: cannot %s record %s", op, r.ID)
	}
	if r.Status.Retired() {
		return Errorf(ECONFLICT, "record %s is %s (superseded, merged or retracted already): cannot %s it", r.ID, r.Status, op)
	}
	if meta != nil && meta.ExpectedVersion != nil && *meta.ExpectedVersion != r.Version {
		return Errorf(ECONFLICT, "record %s is at version %d, not the expected %d", r.ID, r.Version, *meta.ExpectedVersion)
	}
	return nil
}

// HasRecordIDForm reports whether ref has the form of a generated record
// id (a UUID in its canonical 36-character spelling): contest reads such a
// reference as a record, never as external evidence.
func HasRecordIDForm(ref string) bool {
	if len(ref) != 36 {
		return false
	}
	_, err := uuid.Parse(ref)
	return err == nil
}

// buildDerived builds the new record of a supersede, fork or merge, created
// by actor unless the input names its creator.
func (p Policy) buildDerived(in RecordInput, wantType MemoryType, actor string, now time.Time) (*Record, error) {
	v := &validator{prefix: "newRecord."}
	if in.Type != wantType {
		v.add("type", "must be %s, the type of the record it revises", wantType)
		return nil, v.err()
	}
	if in.Type == TypeSemantic {
		hasEvidence := in.Payload.Semantic != nil && len(in.Payload.Semantic.Evidence) > 0
		hasSources := in.Provenance != nil && len(in.Provenance.Sources) > 0
		if !hasEvidence && !hasSources {
			v.add("payload.semantic.evidence", "a new semantic record needs evidence or provenance sources")
			return nil, v.err()
		}
	}
	r, err := p.BuildRecord(in, now)
	if err != nil {
		return nil, PrefixFields(err, "newRecord.")
	}
	if r.Provenance.CreatedBy == "" {
		r.Provenance.CreatedBy = actor
	}
	return r, nil
}

// PrefixFields returns err with prefix put before each of its field names,
// for errors of a nested input (newRecord., inputs[3].).
func PrefixFields(err error, prefix string) error {
	fields := ErrorFields(err)
	if fields == nil {
		return err
	}
	out := make([]FieldError, len(fields))
	for i, f := range fields {
		out[i] = FieldError{Field: prefix + f.Field, Message: f.Message}
	}
	return &Error{Code: ErrorCode(err), Message: "invalid input: " + out[0].Field + ": " + out[0].Message, Fields: out}
}

// next returns a copy of r for modification at now, one version on.
func next(r *Record, now time.Time) *Record {
	n := *r
	n.Tags = slices.Clone(r.Tags)
	n.UpdatedAt = now
	n.Version = r.Version + 1
	return &n
}

// audit returns an audit entry for r recording the previous values of the
// fields that differ between prev and cur.
func audit(prev, cur *Record, action AuditAction, meta RevisionMeta, rationale string, now time.Time) *AuditEntry {
	a := meta.entry(cur.ID, action, rationale, now)
	p := map[string]any{}
	if prev.Status != cur.Status {
		p["status"] = string(prev.Status)
	}
	if prev.Salience != cur.Salience {
		p["salience"] = prev.Salience
	}
	if prev.Lifecycle.BaseSalience != cur.Lifecycle.BaseSalience {
		p["baseSalience"] = prev.Lifecycle.BaseSalience
	}
	if !prev.Lifecycle.LastReinforcedAt.Equal(cur.Lifecycle.LastReinforcedAt) {
		p["lastReinforcedAt"] = prev.Lifecycle.LastReinforcedAt.UTC().Format(time.RFC3339Nano)
	}
	if prev.Version != cur.Version {
		p["version"] = prev.Version
	}
	if len(p) > 0 {
		a.Previous = p
	}
	return a
}

func why(meta RevisionMeta, what string) string {
	if meta.Rationale == "" {
		return what
	}
	return what + ": " + meta.Rationale
}

// setSalience sets r's salience to v as of now and re-anchors decay there:
// the stored salience, the base and the anchor always change together, so
// a later decay starts from v at now and never applies twice. v is held to
// [0, MaxSalience]: a record stored before the bound existed comes back
// within it on its next change.
func setSalience(r *Record, v float64, now time.Time) {
	v = min(max(v, 0), MaxSalience)
	r.Salience = v
	r.Lifecycle.BaseSalience = v
	r.Lifecycle.LastReinforcedAt = now.UTC()
}

// reinforce adds r's reinforcement gain to its salience as of now, capped
// at 1 without lowering a salience already above 1, and restarts decay.
func reinforce(r *Record, now time.Time) {
	eff := EffectiveSalience(r.Lifecycle.BaseSalience, r.Lifecycle, r.CreatedAt, now)
	setSalience(r, math.Max(eff, math.Min(eff+r.Lifecycle.ReinforcementGain, 1)), now)
}

// retire ends old's revisions with status (retracted or superseded),
// salience 0.
func retire(old *Record, status RevisionStatus, now time.Time) *Record {
	n := next(old, now)
	n.Status = status
	setSalience(n, 0, now)
	return n
}

// Supersede replaces old with a new record: old is superseded with
// salience 0 and the new record SUPERSEDES it.
func (p Policy) Supersede(old *Record, in RecordInput, meta RevisionMeta, now time.Time) (*Change, error) {
	if err := validateMeta(meta); err != nil {
		return nil, err
	}
	if err := checkTarget(old, "supersede", &meta); err != nil {
		return nil, err
	}
	nr, err := p.buildDerived(in, old.Type, meta.Actor, now)
	if err != nil {
		return nil, err
	}
	// The new record names the old one only through the SUPERSEDES edge and
	// the audit references, which are gated; a provenance source would show
	// the old id to every caller who sees the new record.
	on := retire(old, StatusSuperseded, now)
	return &Change{
		Creates: []*Record{nr},
		Updates: []*Record{on},
		Edges:   []Relation{{Predicate: PredSupersedes, SourceID: nr.ID, TargetID: old.ID, Weight: 1, CreatedAt: now, Actor: meta.Actor}},
		Audits: []*AuditEntry{
			withRefs(audit(old, on, AuditSupersede, meta, meta.Rationale, now), refTo(RefSupersededBy, nr)),
			withRefs(meta.entry(nr.ID, AuditCreate, meta.Rationale, now), refTo(RefSupersedes, old)),
		},
		Result: nr,
	}, nil
}

// Fork derives a new record from src, which stays active.
func (p Policy) Fork(src *Record, in RecordInput, meta RevisionMeta, now time.Time) (*Change, error) {
	if err := validateMeta(meta); err != nil {
		return nil, err
	}
	if err := checkTarget(src, "fork", &meta); err != nil {
		return nil, err
	}
	nr, err := p.buildDerived(in, src.Type, meta.Actor, now)
	if err != nil {
		return nil, err
	}
	return &Change{
		Creates: []*Record{nr},
		Touched: []string{src.ID},
		Edges:   []Relation{{Predicate: PredDerivedFrom, SourceID: nr.ID, TargetID: src.ID, Weight: 1, CreatedAt: now, Actor: meta.Actor}},
		Audits: []*AuditEntry{
			withRefs(meta.entry(src.ID, AuditFork, meta.Rationale, now), refTo(RefForkedTo, nr)),
			withRefs(meta.entry(nr.ID, AuditCreate, meta.Rationale, now), refTo(RefForkedFrom, src)),
		},
		Result: nr,
	}, nil
}

// Retract withdraws r: status retracted, salience 0. The record and its
// history stay.
func Retract(r *Record, meta RevisionMeta, now time.Time) (*Change, error) {
	if err := validateMeta(meta); err != nil {
		return nil, err
	}
	if err := checkTarget(r, "retract", &meta); err != nil {
		return nil, err
	}
	n := retire(r, StatusRetracted, now)
	return &Change{
		Updates: []*Record{n},
		Audits:  []*AuditEntry{audit(r, n, AuditRetract, meta, why(meta, "retracted"), now)},
		Result:  n,
	}, nil
}

// ValidateMergeIDs rejects an empty list, duplicates and oversize lists
// before anything is read.
func ValidateMergeIDs(ids []string) error {
	v := &validator{}
	if len(ids) < 2 {
		v.add("ids", "merge needs at least two records")
	}
	if len(ids) > MaxMergeIDs {
		v.add("ids", "merge takes at most %d records", MaxMergeIDs)
	}
	v.ids("ids", ids)
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] {
			v.add("ids["+itoa(i)+"]", "duplicate id %q", id)
		}
		seen[id] = true
	}
	return v.err()
}

// Merge retracts every source and creates one record DERIVED_FROM each.
func (p Policy) Merge(sources []*Record, in RecordInput, meta RevisionMeta, now time.Time) (*Change, error) {
	if err := validateMeta(meta); err != nil {
		return nil, err
	}
	ids := make([]string, len(sources))
	for i, s := range sources {
		ids[i] = s.ID
	}
	if err := ValidateMergeIDs(ids); err != nil {
		return nil, err
	}
	for _, s := range sources {
		if err := checkTarget(s, "merge", nil); err != nil {
			return nil, err
		}
		if s.Type != sources[0].Type {
			return nil, Errorf(EINVALID, "cannot merge records of different types (%s and %s)", sources[0].Type, s.Type)
		}
	}
	nr, err := p.buildDerived(in, sources[0].Type, meta.Actor, now)
	if err != nil {
		return nil, err
	}
	c := &Change{Creates: []*Record{nr}, Result: nr}
	created := meta.entry(nr.ID, AuditCreate, meta.Rationale, now)
	c.Audits = append(c.Audits, created)
	for _, s := range sources {
		withRefs(created, refTo(RefMergedFrom, s))
		n := retire(s, StatusRetracted, now)
		c.Updates = append(c.Updates, n)
		c.Edges = append(c.Edges, Relation{Predicate: PredDerivedFrom, SourceID: nr.ID, TargetID: s.ID, Weight: 1, CreatedAt: now, Actor: meta.Actor})
		c.Audits = append(c.Audits, withRefs(audit(s, n, AuditMerge, meta, meta.Rationale, now), refTo(RefMergedInto, nr)))
	}
	return c, nil
}

// Contest marks r contested. When the contesting reference is a record
// (contester non-nil), r gets a CONTESTED_BY edge to it; otherwise the
// reference (a URL, a ticket) is kept as evidence on r.
func Contest(r *Record, ref string, contester *Record, meta RevisionMeta, now time.Time) (*Change, error) {
	v := &validator{}
	meta.validate(v)
	v.str("contestingRef", ref, true)
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := checkTarget(r, "contest", &meta); err != nil {
		return nil, err
	}
	if contester != nil && contester.ID == r.ID {
		return nil, Errorf(EINVALID, "a record cannot contest itself")
	}
	if contester == nil && HasRecordIDForm(ref) {
		// A mistyped record id was kept as external evidence without a
		// word. One of the form of a generated id must name a record the
		// request sees; the message is the one for an id that does not
		// exist, so that it tells nothing of records the caller may not see.
		return nil, Errorf(ENOTFOUND, "record %q not found", ref)
	}
	n := next(r, now)
	n.Status = StatusContested
	c := &Change{Updates: []*Record{n}, Result: n}
	// The caller's rationale lands only on the contested record's entry: the
	// contesting record (possibly another caller's, at another sensitivity)
	// gets a reference and no free text. An external reference is kept as
	// the record's contest evidence, not repeated in the entry.
	a := audit(r, n, AuditContest, meta, meta.Rationale, now)
	if contester != nil {
		c.Edges = []Relation{{Predicate: PredContestedBy, SourceID: r.ID, TargetID: contester.ID, Weight: 1, CreatedAt: now, Actor: meta.Actor}}
		c.Touched = []string{contester.ID}
		withRefs(a, refTo(RefContestedBy, contester))
		c.Audits = append(c.Audits, withRefs(meta.entry(contester.ID, AuditContest, "", now), refTo(RefContests, r)))
	} else {
		n.ContestEvidence = append(slices.Clone(r.ContestEvidence), ref)
	}
	c.Audits = append([]*AuditEntry{a}, c.Audits...)
	return c, nil
}

// Reinforce adds the record's reinforcement gain to its salience as of now
// (capped at 1, never lowering a salience already above 1) and restarts
// decay from now.
func Reinforce(r *Record, meta RevisionMeta, now time.Time) (*Change, error) {
	if err := validateMeta(meta); err != nil {
		return nil, err
	}
	if err := checkTarget(r, "reinforce", &meta); err != nil {
		return nil, err
	}
	n := next(r, now)
	reinforce(n, now)
	return &Change{Updates: []*Record{n}, Result: n,
		Audits: []*AuditEntry{audit(r, n, AuditReinforce, meta, why(meta, "reinforced"), now)}}, nil
}

// Penalize subtracts amount from the record's salience as of now, floored
// at its minimum salience; decay continues from the new value.
func Penalize(r *Record, amount float64, meta RevisionMeta, now time.Time) (*Change, error) {
	v := &validator{}
	meta.validate(v)
	if math.IsNaN(amount) || math.IsInf(amount, 0) || amount < 0 {
		v.add("amount", "amount must be non-negative and finite")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := checkTarget(r, "penalize", &meta); err != nil {
		return nil, err
	}
	eff := EffectiveSalience(r.Lifecycle.BaseSalience, r.Lifecycle, r.CreatedAt, now)
	n := next(r, now)
	setSalience(n, math.Max(eff-amount, math.Min(r.Lifecycle.MinSalience, eff)), now)
	return &Change{Updates: []*Record{n}, Result: n,
		Audits: []*AuditEntry{audit(r, n, AuditPenalize, meta, why(meta, "penalized by "+ftoa(amount)), now)}}, nil
}

// Relate adds an edge from src to tgt with a predicate of the non-lineage
// vocabulary. Relating twice with the same predicate updates the weight.
func Relate(src, tgt *Record, pred Predicate, weight *float64, meta RevisionMeta, now time.Time) (*Change, error) {
	v := &validator{}
	meta.validate(v)
	if !pred.Valid() {
		v.add("predicate", "unknown predicate %q", pred)
	} else if pred.IsLineage() {
		v.add("predicate", "%s edges are written by the revision operations, not addRelation", pred)
	} else if pred == PredNext {
		v.add("predicate", "next edges follow the episodes' sessionId and time, not addRelation")
	}
	w := 1.0
	if weight != nil {
		w = *weight
		v.unit("weight", w)
	}
	if src.ID == tgt.ID {
		v.add("targetId", "a record cannot relate to itself")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if src.Status.Retired() || tgt.Status.Retired() {
		return nil, Errorf(ECONFLICT, "cannot relate a retracted record")
	}
	rel := Relation{Predicate: pred, SourceID: src.ID, TargetID: tgt.ID, Weight: w, CreatedAt: now, Actor: meta.Actor}
	return &Change{
		Touched: []string{src.ID, tgt.ID},
		Edges:   []Relation{rel},
		Audits: []*AuditEntry{
			// The target's entry gets the reference only: the caller's
			// words are about the source's new edge.
			withRefs(meta.entry(src.ID, AuditRelate, meta.Rationale, now), relRef(RefRelatedTo, tgt, pred)),
			withRefs(meta.entry(tgt.ID, AuditRelate, "", now), relRef(RefRelatedFrom, src, pred)),
		},
		Result: src,
	}, nil
}

// relRef returns the reference of a relation to r with predicate pred.
func relRef(role AuditRefRole, r *Record, pred Predicate) AuditRef {
	ref := refTo(role, r)
	ref.Pred = pred
	return ref
}

func validateMeta(meta RevisionMeta) error {
	v := &validator{}
	meta.validate(v)
	return v.err()
}

// Fingerprint identifies a request for idempotency: the same key with a
// different fingerprint is a client bug, reported as ECONFLICT.
func Fingerprint(op string, args any) string {
	b, _ := json.Marshal(args) // args are decoded GraphQL input: always encodable
	h := sha256.Sum256(append([]byte(op+"\x00"), b...))
	return hex.EncodeToString(h[:])
}

// PlanFunc plans a revision from the records read for it: locked holds the
// records it revises (all present), read those it only reads (possibly
// missing). A store may call it more than once for one revision (again on
// the new state when a record it read changed before the write), so it
// must have no effect but its result.
type PlanFunc func(locked, read map[string]*Record) (*Change, error)

// Idempotency identifies a mutation that may be retried.
type Idempotency struct {
	Key         string
	Fingerprint string
	Operation   string
	// Implied says the key was not the client's but implied by the record
	// ids it chose (ImpliedIdempotency): a conflict on it is then the
	// conflict of a taken id.
	Implied bool
}

// ImpliedIdempotency returns the idempotency key implied by a request
// without one that chooses the ids of the records it creates, or nil when
// it chooses none: the request's principal and its chosen ids. A retry of
// the request (the same principal, ids and arguments) after an unknown
// outcome then answers with what the first one created instead of failing
// on its own ids, and a different request with the same ids is the
// CONFLICT of a taken id, as it was. It never matches a client's key
// (those begin with the principal's actor, never with a NUL byte), nor
// another principal's request.
func ImpliedIdempotency(actor, op string, args any, ids []string) *Idempotency {
	chosen := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			chosen = append(chosen, id)
		}
	}
	if len(chosen) == 0 {
		return nil
	}
	slices.Sort(chosen)
	h := sha256.Sum256([]byte(strings.Join(slices.Compact(chosen), "\x00")))
	return &Idempotency{Key: "\x00ids\x00" + actor + "\x00" + hex.EncodeToString(h[:]),
		Fingerprint: Fingerprint(op, args), Operation: op, Implied: true}
}

// NewIdempotency validates a client's key; nil key means none.
func NewIdempotency(key *string, op string, args any) (*Idempotency, error) {
	if key == nil {
		return nil, nil
	}
	if *key == "" || len(*key) > 256 {
		return nil, &Error{Code: EINVALID, Message: "idempotencyKey must be 1 to 256 bytes",
			Fields: []FieldError{{Field: "idempotencyKey", Message: "must be 1 to 256 bytes"}}}
	}
	return &Idempotency{Key: *key, Fingerprint: Fingerprint(op, args), Operation: op}, nil
}

// Revised is the result of a revision: the record it returns (its
// Change.Result) and the edges it wrote. An idempotency key stores both, so
// a replay answers with them without re-reading the edges.
type Revised struct {
	Record *Record
	Edges  []Relation
}

// RevisionStore applies revisions. Implemented by the neo4j package; the
// RevisionService is the application's way to it.
type RevisionStore interface {
	// Revise runs plan over the records lock (all must exist: ENOTFOUND
	// otherwise) and readIDs (optional) and applies its Change in one write
	// transaction, only if none of those records changed since plan read
	// them (else plan runs again on the new state, a bounded number of
	// times, then ECONFLICT). With idem, a repeated request returns the first result:
	// its record when the request sees it in full, and those of its edges
	// whose ends the request may see (Trust.ReplayEdges).
	Revise(ctx context.Context, idem *Idempotency, lock, readIDs []string, plan PlanFunc) (*Revised, error)
}
