package membrane

import "strings"

// AuditRefRole says how the record an audit reference names relates to the
// change its entry records. A small fixed vocabulary: ids of other records
// never appear in an entry's free text, only in references, which are
// gated per caller like relations (GateEntry).
type AuditRefRole string

// Audit reference roles, named from the side of the entry's own record.
const (
	RefSupersedes   AuditRefRole = "supersedes"    // the new record of a supersede: the record it replaced
	RefSupersededBy AuditRefRole = "superseded_by" // the superseded record: its successor
	RefForkedFrom   AuditRefRole = "forked_from"   // the new record of a fork: its source
	RefForkedTo     AuditRefRole = "forked_to"     // the source of a fork: the new record
	RefMergedFrom   AuditRefRole = "merged_from"   // the new record of a merge: one per source
	RefMergedInto   AuditRefRole = "merged_into"   // a merged source: the new record
	RefContests     AuditRefRole = "contests"      // the contesting record: the record it contests
	RefContestedBy  AuditRefRole = "contested_by"  // the contested record: the contesting record
	RefRelatedTo    AuditRefRole = "related_to"    // the source of addRelation: its target (with the predicate)
	RefRelatedFrom  AuditRefRole = "related_from"  // the target of addRelation: its source (with the predicate)
	RefDerivedFrom  AuditRefRole = "derived_from"  // a record consolidation or captureMemory derived: the episode or capture it came from
	RefSupportedBy  AuditRefRole = "supported_by"  // a fact consolidation reinforced: the episode that supports it
	RefEdgeOut      AuditRefRole = "removed_edge_out"
	RefEdgeIn       AuditRefRole = "removed_edge_in"
)

// UnknownLevel is the sensitivity level given to a reference whose record
// could not be found when it was written (an old entry migrated after the
// record and its trail were gone): above every ceiling, so it is never shown.
const UnknownLevel = 99

// MaxAuditRefs bounds the references one audit entry stores (and a read
// returns, unpaged): deleting a hub entity with thousands of mentions
// keeps the first MaxAuditRefs of its removed edges and counts the rest
// (AuditEntry.RelatedOmitted).
const MaxAuditRefs = 1000

// AuditRef is a typed reference from an audit entry to another record.
type AuditRef struct {
	Role     AuditRefRole
	RecordID string
	// Pred is the edge's predicate for relation and removed-edge roles.
	Pred Predicate
	// Level and Scope are the referenced record's sensitivity level and
	// scope when the entry was written (raised to its current ones when
	// read, if it still exists): what gating looks at. Never shown.
	Level int
	Scope string
}

// refTo returns a reference of role to r.
func refTo(role AuditRefRole, r *Record) AuditRef {
	return AuditRef{Role: role, RecordID: r.ID, Level: r.Sensitivity.Level(), Scope: r.Scope}
}

// Predicate returns the edge's predicate, or nil for roles without one.
func (r AuditRef) Predicate() *Predicate {
	if r.Pred == "" {
		return nil
	}
	return &r.Pred
}

// withRefs returns a with refs appended.
func withRefs(a *AuditEntry, refs ...AuditRef) *AuditEntry {
	a.Related = append(a.Related, refs...)
	return a
}

// EdgeRef returns the reference a delete tombstone keeps of one removed
// edge: typ is the relationship type (SUPERSEDES), out whether it started
// at the deleted record, other the record at its other end.
func EdgeRef(typ string, out bool, otherID string, otherLevel int, otherScope string) AuditRef {
	role := RefEdgeIn
	if out {
		role = RefEdgeOut
	}
	return AuditRef{Role: role, RecordID: otherID, Pred: Predicate(strings.ToLower(typ)), Level: otherLevel, Scope: otherScope}
}

// RemovedEdges renders a tombstone's removed-edge references in the older
// text form, TYPE->id (outgoing) or TYPE<-id (incoming). It reads only
// Related, so on a gated entry it lists only the edges the caller may see.
func (a *AuditEntry) RemovedEdges() []string {
	var out []string
	for _, r := range a.Related {
		switch r.Role {
		case RefEdgeOut:
			out = append(out, strings.ToUpper(string(r.Pred))+"->"+r.RecordID)
		case RefEdgeIn:
			out = append(out, strings.ToUpper(string(r.Pred))+"<-"+r.RecordID)
		}
	}
	return out
}

// GateEntry returns a as a request of trust t may see it when it sees a's
// record in full: references to records t cannot see are omitted, those it
// sees redacted kept (a redacted record shows its id), as relation fields
// gate their other end. A reference's Level and Scope are the stricter of
// the copy stored with the entry and the record now (refsNow in the
// store, while it exists), not the record now alone as for relations. a
// is not changed (entries may be shared between subscribers).
func (t Trust) GateEntry(a *AuditEntry) *AuditEntry {
	if len(a.Related) == 0 {
		return a
	}
	out := *a
	out.Related = make([]AuditRef, 0, len(a.Related))
	for _, r := range a.Related {
		if t.VisibilityOf(r.Level, r.Scope) != Invisible {
			out.Related = append(out.Related, r)
		}
	}
	return &out
}

// LegacyRationalePrefixes are how the rationales that named other records
// began before audit references existed; the start-up migration reads the
// entries whose rationale begins so (or is sealed) and no others. A
// relation's source entry began with the predicate and its target's with
// the target's own id, so every relate entry is read too.
var LegacyRationalePrefixes = []string{
	"superseded by ", "supersedes ", "forked to ", "forked from ", "merged from ", "merged into ",
	"contested by ", "contests ", "reinforced: supported by episode ", "extracted from successful episode ", "plan of ",
	"Entity mentioned by capture ", "Fact derived from capture ",
}

// LegacyRationale splits a rationale written before audit references into
// the caller's words and the references the text named (Level and Scope
// left for the caller to fill in). changed is false when the text names no
// record. The caller's words are what followed the first ": " after the
// generated part; on a contesting record's entry and a relation target's
// entry they are dropped, as entries written now carry none there. The
// texts are the ones internal/membrane wrote (revision.go, consolidation.go)
// before this change; ids containing ": " or ", " cannot be told apart from
// the words and are read up to the first of them: SettleLegacy then drops
// the words.
func LegacyRationale(action AuditAction, rationale string) (words string, refs []AuditRef, changed bool) {
	head, tail, _ := strings.Cut(rationale, ": ")
	cut := func(prefix string) (string, bool) { return strings.CutPrefix(head, prefix) }
	one := func(role AuditRefRole, id string) (string, []AuditRef, bool) {
		if id == "" {
			return rationale, nil, false
		}
		return tail, []AuditRef{{Role: role, RecordID: id}}, true
	}
	switch action {
	case AuditSupersede:
		if id, ok := cut("superseded by "); ok {
			return one(RefSupersededBy, id)
		}
	case AuditFork:
		if id, ok := cut("forked to "); ok {
			return one(RefForkedTo, id)
		}
	case AuditMerge:
		if id, ok := cut("merged into "); ok {
			return one(RefMergedInto, id)
		}
	case AuditCreate:
		if id, ok := cut("supersedes "); ok {
			return one(RefSupersedes, id)
		}
		if id, ok := cut("forked from "); ok {
			return one(RefForkedFrom, id)
		}
		if list, ok := cut("merged from "); ok {
			for _, id := range strings.Split(list, ", ") {
				if id != "" {
					refs = append(refs, AuditRef{Role: RefMergedFrom, RecordID: id})
				}
			}
			return tail, refs, len(refs) > 0
		}
		if id, ok := strings.CutPrefix(rationale, "extracted from successful episode "); ok && id != "" {
			return "extracted from a successful episode", []AuditRef{{Role: RefDerivedFrom, RecordID: id}}, true
		}
		for _, what := range []string{"Entity mentioned by", "Fact derived from"} {
			if id, ok := strings.CutPrefix(rationale, what+" capture "); ok && id != "" {
				return what + " a capture", []AuditRef{{Role: RefDerivedFrom, RecordID: id}}, true
			}
		}
		if rest, ok := strings.CutPrefix(rationale, "plan of "); ok {
			if n, id, ok := strings.Cut(rest, " steps extracted from episode "); ok && id != "" {
				return "plan of " + n + " steps extracted from an episode", []AuditRef{{Role: RefDerivedFrom, RecordID: id}}, true
			}
		}
	case AuditReinforce:
		if id, ok := strings.CutPrefix(rationale, "reinforced: supported by episode "); ok && id != "" {
			return "reinforced: supported by an episode", []AuditRef{{Role: RefSupportedBy, RecordID: id}}, true
		}
	case AuditContest:
		if id, ok := cut("contests "); ok && id != "" {
			return "", []AuditRef{{Role: RefContests, RecordID: id}}, true
		}
		if _, ok := cut("contested by external reference "); ok {
			// The reference is the caller's own (also the record's
			// contest evidence), not a record: kept as written.
			return rationale, nil, false
		}
		if id, ok := cut("contested by "); ok {
			return one(RefContestedBy, id)
		}
	case AuditRelate:
		// "<target> is the target of <pred> from <source>[: words]"
		if tgt, rest, ok := strings.Cut(head, " is the target of "); ok && tgt != "" {
			if pred, src, ok := strings.Cut(rest, " from "); ok && src != "" {
				return "", []AuditRef{{Role: RefRelatedFrom, RecordID: src, Pred: Predicate(pred)}}, true
			}
		}
		// "<pred> <target>[: words]" (a client-chosen target id may hold
		// spaces; SettleLegacy drops the words unless it is a record's).
		if pred, tgt, ok := strings.Cut(head, " "); ok && Predicate(pred).Valid() && tgt != "" {
			return tail, []AuditRef{{Role: RefRelatedTo, RecordID: tgt, Pred: Predicate(pred)}}, true
		}
	}
	return rationale, nil, false
}

// SettleLegacy returns the words LegacyRationale parsed out of a rationale
// when every record id it read there (ids) names a record or a deleted one
// (found), and "" otherwise: a client-chosen id holding ": ", ", " or a
// space is cut short by the parse, and its rest would stay in the words
// for readers who cannot see that record. Dropping the caller's words of
// such an old entry is the price of never showing a piece of an id.
func SettleLegacy(words string, ids []string, found func(id string) bool) string {
	for _, id := range ids {
		if !found(id) {
			return ""
		}
	}
	return words
}

// RecordLocation is the sensitivity level and scope of a record, or of a
// deleted one as its last audit entry kept them: what gating looks at.
type RecordLocation struct {
	Level int
	Scope string
}

// GateProvenance returns p as a request of trust t may see it: without the
// sources whose ref names a record (or a deleted record) t cannot see. at
// locates the refs that name records; a ref found there at UnknownLevel is
// shown to nobody, one not found there is not a record id and is kept.
// Sources written before audit references named a superseded record this
// way, and merges copied them; gating here covers them wherever they are.
// p is not changed (records may be shared between subscribers).
func (t Trust) GateProvenance(p *Provenance, at map[string]RecordLocation) *Provenance {
	if p == nil {
		return nil
	}
	out := *p
	out.Sources = make([]ProvenanceSource, 0, len(p.Sources))
	for _, s := range p.Sources {
		if l, ok := at[s.Ref]; ok && t.VisibilityOf(l.Level, l.Scope) == Invisible {
			continue
		}
		out.Sources = append(out.Sources, s)
	}
	return &out
}
