package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.LeaseStore = (*DB)(nil)

// UpdateLease reads lease key under a write lock, lets fn decide its next
// state and writes it, in one write transaction: of two processes racing
// for a lease, the second decides on what the first wrote.
func (db *DB) UpdateLease(ctx context.Context, key string, fn func(membrane.Lease) (membrane.Lease, error)) (membrane.Lease, error) {
	return write(ctx, db, func(tx neo4j.ManagedTransaction) (membrane.Lease, error) {
		row, err := single(ctx, tx, cypher.Must("lease_lock"), map[string]any{"key": key})
		if err != nil {
			return membrane.Lease{}, err
		}
		if row == nil {
			return membrane.Lease{}, fmt.Errorf("lease %s: MERGE returned no row", key)
		}
		p, _ := row.Values[0].(map[string]any)
		cur := membrane.Lease{Key: key, Holder: str(p["holder"]), ExpiresAt: tm(p["expiresAt"]), Run: str(p["run"]),
			Slot: utcOrNil(p["slot"]), LastSlot: utcOrNil(p["lastSlot"])}
		next, err := fn(cur)
		if err != nil {
			return cur, err
		}
		props := map[string]any{"holder": nil, "expiresAt": nil, "run": nil, "slot": nil, "lastSlot": nil}
		if next.Holder != "" {
			props["holder"], props["expiresAt"] = next.Holder, next.ExpiresAt.UTC()
		}
		if next.Run != "" {
			props["run"] = next.Run
		}
		if next.Slot != nil {
			props["slot"] = next.Slot.UTC()
		}
		if next.LastSlot != nil {
			props["lastSlot"] = next.LastSlot.UTC()
		}
		_, err = single(ctx, tx, cypher.Must("lease_write"), map[string]any{"key": key, "props": props})
		return next, err
	})
}

// utcOrNil is a stored instant in UTC, nil when absent.
func utcOrNil(v any) *time.Time {
	t, ok := v.(time.Time)
	if !ok {
		return nil
	}
	t = t.UTC()
	return &t
}

func jobRunProps(r *membrane.JobRun) (map[string]any, error) {
	// lease is the key of the lease the run is held under, by which
	// AbandonJobRuns finds the runs of a process's jobs.
	p := map[string]any{
		"id": r.ID, "job": string(r.Job), "trigger": string(r.Trigger), "holder": r.Holder,
		"lease": membrane.LeaseKey(r.Job, r.Scopes), "outcome": nil,
		"startedAt": r.StartedAt.UTC(), "scanned": r.Scanned, "changed": r.Changed, "error": r.Error,
		"slot": nil, "finishedAt": nil, "scopes": nil, "details": nil,
	}
	if r.Outcome != "" {
		p["outcome"] = string(r.Outcome)
	}
	if r.Slot != nil {
		p["slot"] = r.Slot.UTC()
	}
	if r.FinishedAt != nil {
		p["finishedAt"] = r.FinishedAt.UTC()
	}
	if r.Scopes != nil {
		p["scopes"] = r.Scopes
	}
	if r.Details != nil {
		b, err := json.Marshal(r.Details)
		if err != nil {
			return nil, fmt.Errorf("encode job run details: %w", err)
		}
		p["details"] = string(b)
	}
	return p, nil
}

func jobRunFromProps(p map[string]any) (*membrane.JobRun, error) {
	r := &membrane.JobRun{
		ID: str(p["id"]), Job: membrane.JobName(str(p["job"])), Trigger: membrane.JobTrigger(str(p["trigger"])),
		Holder: str(p["holder"]), StartedAt: tm(p["startedAt"]), Scanned: integer(p["scanned"]),
		Changed: integer(p["changed"]), Error: str(p["error"]), Outcome: membrane.JobOutcome(str(p["outcome"])),
		Slot: utcOrNil(p["slot"]), FinishedAt: utcOrNil(p["finishedAt"]),
	}
	// Runs recorded before outcomes were stored tell success from failure
	// by their error only.
	if r.Outcome == "" && r.FinishedAt != nil {
		r.Outcome = membrane.JobSucceeded
		if r.Error != "" {
			r.Outcome = membrane.JobFailed
		}
	}
	if s, ok := p["scopes"]; ok {
		r.Scopes = strs(s)
	}
	if s := str(p["details"]); s != "" {
		if err := json.Unmarshal([]byte(s), &r.Details); err != nil {
			return nil, fmt.Errorf("job run %s: decode details: %w", r.ID, err)
		}
	}
	return r, nil
}

// CreateJobRun records a run as it starts, so running jobs are visible.
func (db *DB) CreateJobRun(ctx context.Context, r *membrane.JobRun) error {
	props, err := jobRunProps(r)
	if err != nil {
		return err
	}
	_, err = write(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := single(ctx, tx, cypher.Must("job_run_create"), map[string]any{"props": props})
		return struct{}{}, err
	})
	return err
}

// FinishJobRun records how a run ended, unless another process marked it
// abandoned meanwhile.
func (db *DB) FinishJobRun(ctx context.Context, r *membrane.JobRun) error {
	props, err := jobRunProps(r)
	if err != nil {
		return err
	}
	_, err = write(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := single(ctx, tx, cypher.Must("job_run_finish"),
			map[string]any{"id": r.ID, "props": props, "abandoned": string(membrane.JobAbandoned)})
		return struct{}{}, err
	})
	return err
}

// AbandonJobRuns marks abandoned the runs of the leases keys that recorded
// no end and that no lease names (their holder died and the lease was
// taken over or expired), finished at now.
func (db *DB) AbandonJobRuns(ctx context.Context, keys []string, now time.Time) (int64, error) {
	n, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (int64, error) {
		row, err := single(ctx, tx, cypher.Must("job_runs_abandon"), map[string]any{"keys": keys, "now": now.UTC(),
			"outcome": string(membrane.JobAbandoned), "error": membrane.AbandonedMessage})
		if err != nil || row == nil {
			return 0, err
		}
		return integer(row.Values[0]), nil
	})
	if err != nil {
		return 0, fmt.Errorf("abandon job runs: %w", err)
	}
	return n, nil
}

// jobRunsField names the job run listing in its cursors.
const jobRunsField = "jobRuns"

func jobRunCursor(r *membrane.JobRun) membrane.Cursor {
	return membrane.TimeCursor(jobRunsField, r.StartedAt, r.ID)
}

// FindJobRuns returns one keyset page of job runs, newest first.
func (db *DB) FindJobRuns(ctx context.Context, job *membrane.JobName, page membrane.Page) (*membrane.JobRunPage, error) {
	params := map[string]any{"job": nil, "afterAt": nil, "afterId": nil, "limit": int64(page.First + 1)}
	if job != nil {
		params["job"] = string(*job)
	}
	if c := page.After; c != nil {
		t, ok := c.TimeKey(jobRunsField)
		if !ok {
			return nil, membrane.Errorf(membrane.EINVALID, "after is not a job run cursor")
		}
		params["afterAt"], params["afterId"] = t, c.ID
	}
	runs, err := read(ctx, db, func(tx neo4j.ManagedTransaction) ([]*membrane.JobRun, error) {
		rows, err := collect(ctx, tx, cypher.Must("job_runs_page"), params)
		if err != nil {
			return nil, err
		}
		out := make([]*membrane.JobRun, 0, len(rows))
		for _, row := range rows {
			p, _ := row.Values[0].(map[string]any)
			r, err := jobRunFromProps(p)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("find job runs: %w", err)
	}
	return membrane.NewPageOf(runs, page.First, jobRunCursor), nil
}
