package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.DeleteStore = (*DB)(nil)

// PruneBatch is how many records one transaction of a prune deletes.
// Deleting writes more than decay does (tombstone, edges, index entries),
// so batches are smaller.
const PruneBatch = 1_000

var pruneSweep = newSweep("prune")

// DeleteRecord deletes one record in one write transaction: it locks the
// record, reads the edges the deletion removes, asks plan for the
// tombstone (plan may refuse), writes it and deletes the record with its
// edges and plan steps.
func (db *DB) DeleteRecord(ctx context.Context, id string, plan func(*membrane.Record, []membrane.AuditRef) (*membrane.AuditEntry, error)) (*membrane.AuditEntry, error) {
	return write(ctx, db, func(tx neo4j.ManagedTransaction) (*membrane.AuditEntry, error) {
		locked, err := db.recordsByID(ctx, tx, lockRecords, []string{id})
		if err != nil {
			return nil, err
		}
		r := locked[id]
		if r == nil {
			return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
		}
		rows, err := collect(ctx, tx, cypher.Must("record_edges"), map[string]any{"id": id})
		if err != nil {
			return nil, err
		}
		edges := make([]membrane.AuditRef, len(rows))
		for i, row := range rows {
			out, _ := row.Values[1].(bool)
			edges[i] = membrane.EdgeRef(str(row.Values[0]), out, str(row.Values[2]), int(integer(row.Values[3])), str(row.Values[4]))
		}
		a, err := plan(r, edges)
		if err != nil {
			return nil, err
		}
		if err := refuseUnopened(locked); err != nil {
			return nil, err
		}
		props, err := db.auditProps(a, r.Sensitivity)
		if err != nil {
			return nil, err
		}
		if _, err := single(ctx, tx, cypher.Must("delete_record"), map[string]any{"id": id, "audit": props}); err != nil {
			return nil, err
		}
		return a, nil
	})
}

// Prune deletes the prunable records in reach (membrane.Prunable, applied
// set-based by cypher/prune.cypher), each leaving a tombstone audit entry,
// in batched transactions. Scanned counts the records in reach, Changed
// those deleted.
func (db *DB) Prune(ctx context.Context, o membrane.PruneOptions) (membrane.SweepResult, error) {
	params := map[string]any{
		"now": o.Now.UTC(), "batch": int64(PruneBatch), "floor": membrane.PruneFloor,
		"actor": membrane.JobActor, "historyCutoff": nil, "maxRefs": int64(membrane.MaxAuditRefs),
	}
	if db.maxAuditRefs > 0 {
		params["maxRefs"] = int64(db.maxAuditRefs)
	}
	if o.HistoryRetention > 0 {
		params["historyCutoff"] = o.Now.Add(-o.HistoryRetention).UTC()
	}
	rows, err := autocommit(ctx, db, pruneSweep.statement(o.SweepOptions, params), params)
	if err != nil {
		return membrane.SweepResult{}, fmt.Errorf("prune: %w", err)
	}
	if o.IdempotencyRetention > 0 && o.Scopes == nil {
		if _, err := db.ExpireIdempotencyKeys(ctx, o.Now.Add(-o.IdempotencyRetention)); err != nil {
			return membrane.SweepResult{}, fmt.Errorf("prune: %w", err)
		}
	}
	if o.RunRetention > 0 && o.Scopes == nil {
		if _, err := db.ExpireJobRuns(ctx, o.Now.Add(-o.RunRetention)); err != nil {
			return membrane.SweepResult{}, fmt.Errorf("prune: %w", err)
		}
	}
	return sweepResult(rows), nil
}

// ExpireJobRuns deletes the records of the job runs that finished before
// cutoff, in batches, and returns how many.
func (db *DB) ExpireJobRuns(ctx context.Context, cutoff time.Time) (int64, error) {
	rows, err := autocommit(ctx, db, cypher.Must("job_runs_expire"),
		map[string]any{"cutoff": cutoff.UTC(), "batch": int64(PruneBatch)})
	if err != nil {
		return 0, fmt.Errorf("expire job runs: %w", err)
	}
	var n int64
	if len(rows) > 0 {
		n, _ = rows[0].Values[0].(int64)
	}
	return n, nil
}

// ExpireIdempotencyKeys deletes the idempotency keys stored before cutoff,
// in batches, and returns how many.
func (db *DB) ExpireIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	rows, err := autocommit(ctx, db, cypher.Must("idempotency_expire"),
		map[string]any{"cutoff": cutoff.UTC(), "batch": int64(PruneBatch)})
	if err != nil {
		return 0, fmt.Errorf("expire idempotency keys: %w", err)
	}
	var n int64
	if len(rows) > 0 {
		n, _ = rows[0].Values[0].(int64)
	}
	return n, nil
}
