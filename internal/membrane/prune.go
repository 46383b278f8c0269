package membrane

import (
	"context"
	"time"
)

// PruneFloor is the effective salience below which prune deletes an
// auto_prune record (the reference's 0.001). A record whose minimum
// salience is above it never gets there: its floor keeps it.
const PruneFloor = 0.001

// JobActor is the actor of audit entries written by maintenance jobs.
const JobActor = "membrane-jobs"

// PruneOptions bounds one prune pass.
type PruneOptions struct {
	SweepOptions
	// HistoryRetention is how long after its last change a record that is
	// part of revision history is kept; 0 keeps history forever.
	HistoryRetention time.Duration
	// IdempotencyRetention is how long idempotency keys (explicit, or
	// implied by client-chosen ids) are kept, and so how long a retry of
	// the same request replays its first answer; 0 keeps them forever.
	// Keys have no scope: a pass restricted to scopes leaves them alone.
	IdempotencyRetention time.Duration
	// RunRetention is how long the records of finished job runs are kept;
	// 0 keeps them forever. Like keys, runs are left alone by a pass
	// restricted to scopes.
	RunRetention time.Duration
}

// InHistory reports whether a record is part of revision history: it is
// retracted (superseded, merged or withdrawn) or contested, or a lineage
// edge (SUPERSEDES, DERIVED_FROM, CONTESTED_BY) links it to another record
// in either direction. hasLineageEdge says whether such an edge exists.
func InHistory(r *Record, hasLineageEdge bool) bool {
	return r.Status != StatusActive || hasLineageEdge
}

// Prunable reports whether prune may delete r at now: only auto_prune,
// unpinned records whose effective salience is below PruneFloor, and of
// those, records that are part of revision history only once
// HistoryRetention has passed since their last change. manual_only records
// are deleted only by an admin (deleteRecord), never records not at all.
// cypher/prune.cypher applies the same rule, set-based.
func Prunable(r *Record, hasLineageEdge bool, o PruneOptions) bool {
	lc := r.Lifecycle
	if lc.DeletionPolicy != DeleteAutoPrune || lc.Pinned {
		return false
	}
	if EffectiveSalience(lc.BaseSalience, lc, r.CreatedAt, o.Now) >= PruneFloor {
		return false
	}
	if InHistory(r, hasLineageEdge) {
		return o.HistoryRetention > 0 && o.Now.Sub(r.UpdatedAt) >= o.HistoryRetention
	}
	return true
}

// PlanDelete plans deleting r on an admin's request: it returns the
// tombstone audit entry that outlives the record. Records whose deletion
// policy is never cannot be deleted. edges lists the edges the deletion
// removes (EdgeRef), kept on the tombstone as references so that the
// lineage the record took part in stays readable to whoever may see it.
func PlanDelete(r *Record, edges []AuditRef, meta RevisionMeta, now time.Time) (*AuditEntry, error) {
	if err := validateMeta(meta); err != nil {
		return nil, err
	}
	if r.Lifecycle.DeletionPolicy == DeleteNever {
		return nil, Errorf(EPRECONDITION, "record %s has deletion policy never: it cannot be deleted", r.ID)
	}
	if meta.ExpectedVersion != nil && *meta.ExpectedVersion != r.Version {
		return nil, Errorf(ECONFLICT, "record %s is at version %d, not the expected %d", r.ID, r.Version, *meta.ExpectedVersion)
	}
	a := NewAuditEntry(r.ID, AuditDelete, meta.Actor, why(meta, "deleted by an admin"), now)
	a.Previous = Tombstone(r)
	a.Related = append([]AuditRef{}, edges[:min(len(edges), MaxAuditRefs)]...)
	a.RelatedOmitted = len(edges) - len(a.Related)
	return a, nil
}

// Tombstone is what a delete audit entry keeps of the deleted record.
func Tombstone(r *Record) map[string]any {
	return map[string]any{
		"type": string(r.Type), "status": string(r.Status), "salience": r.Salience,
		"baseSalience": r.Lifecycle.BaseSalience, "version": r.Version,
	}
}

// DeleteStore deletes records. Implemented by the neo4j package; the
// DeleteService is the application's way to it (Prune is the jobs').
type DeleteStore interface {
	// DeleteRecord deletes record id and its edges in one transaction,
	// writing the tombstone plan returns (plan sees the record, locked, and
	// the edges the deletion removes). ENOTFOUND when there is no record.
	DeleteRecord(ctx context.Context, id string, plan func(r *Record, edges []AuditRef) (*AuditEntry, error)) (*AuditEntry, error)
	// Prune deletes every prunable record in reach (see Prunable), each
	// with a tombstone, in batched transactions.
	Prune(ctx context.Context, o PruneOptions) (SweepResult, error)
}
