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
