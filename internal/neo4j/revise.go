package neo4j

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.RevisionStore = (*DB)(nil)

// reviseAttempts bounds the runs of one revision: a run whose guard fails
// (a record it read changed before its write) reads and plans again, on
// the new state. The last run reads under the records' write locks, in the
// transaction of its write, as revisions of a record written by many
// clients at once would otherwise keep failing: it cannot fail on a
// changed record, so a revision makes progress however busy its records.
const reviseAttempts = 4

// errStale is a run of a revision whose guard failed: nothing was written.
var errStale = errors.New("a record changed between the revision's read and its write")

// Revise runs one revision on an optimistic protocol: one read of the
// records (lock: all must exist; readIDs: they may be missing) and of
// idem's key, with no lock held; plan, in Go; then one guarded write
// (apply_change) that applies the planned change only if every record the
// plan read is as it was read (see apply_change's guard) and the key is
// still unstored, in the same transaction as the change and its audit
// entries. When the guard fails nothing is written and the revision runs
// again, from its read (the last run under locks: see reviseAttempts): of
// two revisions racing on a record, the second plans against the first's
// result. With idem, a key already stored replays its result instead (see
// idempotent), and the result and the edges the change wrote are stored
// under the key by the write.
func (db *DB) Revise(ctx context.Context, idem *membrane.Idempotency, lock, readIDs []string, plan membrane.PlanFunc) (*membrane.Revised, error) {
	var res *written
	var err error
	for attempt := 1; ; attempt++ {
		res, err = db.reviseOnce(ctx, idem, lock, readIDs, plan, attempt)
		stale := errors.Is(err, errStale)
		if !stale && !refusedTransient(err) {
			break
		}
		if attempt == reviseAttempts || ctx.Err() != nil {
			if stale {
				err = fmt.Errorf("%w: %w", membrane.Errorf(membrane.ECONFLICT, "the records of this revision kept changing while it was planned; retry"), err)
			}
			return nil, err
		}
	}
	if err != nil && idem != nil && membrane.ErrorCode(err) == membrane.ECONFLICT {
		// A request with the same key may have committed between this
		// one's read and its write (the key's constraint failed it): its
		// result, or the conflict of a key used for another request, is
		// the answer.
		if replayed, found, rerr := readReplay(ctx, db, idem); found {
			res, err = replayed, rerr
		}
	}
	if err != nil {
		return nil, err
	}
	return &membrane.Revised{Record: res.recs[0], Edges: res.edges}, nil
}

// reviseOnce is one run of Revise: its read, its plan and its guarded
// write; errStale when the guard failed. The last run is locked.
func (db *DB) reviseOnce(ctx context.Context, idem *membrane.Idempotency, lock, readIDs []string, plan membrane.PlanFunc, attempt int) (*written, error) {
	if attempt == reviseAttempts {
		return write(ctx, db, func(tx neo4j.ManagedTransaction) (*written, error) {
			return db.reviseLocked(ctx, tx, idem, lock, readIDs, plan)
		})
	}
	snap, err := db.readRevision(ctx, autoRead(ctx, db), lock, readIDs, idem)
	if err != nil {
		return nil, err
	}
	if snap.key != nil {
		return db.replayRevision(ctx, snap, idem, func(ids []string) ([]map[string]any, error) {
			return read(ctx, db, func(tx neo4j.ManagedTransaction) ([]map[string]any, error) {
				return txFetch(ctx, tx)(ids)
			})
		})
	}
	res, change, params, err := db.planRevision(snap, idem, lock, plan)
	if err != nil {
		return nil, err
	}
	if db.beforeReviseWrite != nil {
		db.beforeReviseWrite(attempt)
	}
	if !db.followsUp(snap.revised, change) {
		// The change is the one statement: it runs alone, as an auto-commit
		// transaction (its commit costs no round trip of its own).
		row, err := writeOnce(ctx, db, cypher.Must("apply_change"), params)
		if err != nil {
			return nil, err
		}
		if applied(row) {
			return res, nil
		}
		return nil, errStale
	}
	return write(ctx, db, func(tx neo4j.ManagedTransaction) (*written, error) {
		return db.applyRevision(ctx, tx, snap, change, params, res)
	})
}

// reviseLocked is a run of Revise in tx that reads its records under write
// locks (lock_records, in id order, then revise_read): its guard can only
// fail on the idempotency key, stored meanwhile by a request with the same
// key.
func (db *DB) reviseLocked(ctx context.Context, tx neo4j.ManagedTransaction, idem *membrane.Idempotency, lock, readIDs []string, plan membrane.PlanFunc) (*written, error) {
	if _, err := collect(ctx, tx, lockRecords, map[string]any{"ids": slices.Concat(lock, readIDs)}); err != nil {
		return nil, err
	}
	snap, err := db.readRevision(ctx, func(params map[string]any) ([]*neo4j.Record, error) {
		return collect(ctx, tx, cypher.Must("revise_read"), params)
	}, lock, readIDs, idem)
	if err != nil {
		return nil, err
	}
	if snap.key != nil {
		return db.replayRevision(ctx, snap, idem, txFetch(ctx, tx))
	}
	res, change, params, err := db.planRevision(snap, idem, lock, plan)
	if err != nil {
		return nil, err
	}
	return db.applyRevision(ctx, tx, snap, change, params, res)
}

// replayRevision answers with the result stored under idem's key (see
// replayKey), from the records read with it and, for those it lacks (an
// edge's end that the revision did not name), with more.
// A stored key answers alone: a replay revises nothing, so it is not
// refused for a record that does not open on this server.
func (db *DB) replayRevision(ctx context.Context, snap *revision, idem *membrane.Idempotency, more fetchFunc) (*written, error) {
	fetch := func(ids []string) ([]map[string]any, error) {
		var out []map[string]any
		var missing []string
		for _, id := range ids {
			if p, ok := snap.stored[id]; ok {
				out = append(out, p)
			} else {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return out, nil
		}
		rest, err := more(missing)
		return append(out, rest...), err
	}
	res, _, err := db.replayKey(ctx, fetch, idem, snap.key["fingerprint"], snap.key["resultIds"], snap.key["edges"])
	return res, err
}

// planRevision plans a revision from what snap read and returns its
// result, its change and the parameters of apply_change that write it.
func (db *DB) planRevision(snap *revision, idem *membrane.Idempotency, lock []string, plan membrane.PlanFunc) (*written, *membrane.Change, map[string]any, error) {
	for _, id := range lock {
		if snap.revised[id] == nil {
			return nil, nil, nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
		}
	}
	change, err := plan(snap.revised, snap.read)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := refuseUnopened(snap.revised, snap.read); err != nil {
		return nil, nil, nil, err
	}
	res := &written{recs: []*membrane.Record{change.Result}, edges: change.Edges}
	params, err := db.changeParams(snap.revised, snap.read, change)
	if err != nil {
		return nil, nil, nil, err
	}
	store := []map[string]any{}
	var key any
	if idem != nil {
		p, err := db.keyParams(idem, res)
		if err != nil {
			return nil, nil, nil, err
		}
		store, key = append(store, p), idem.Key
	}
	params["idem"], params["key"], params["guards"] = store, key, snap.guards
	return res, change, params, nil
}

// applyRevision writes a planned change in tx: apply_change, then what
// follows it (followUp); errStale, the transaction rolled back, when the
// guard failed: nothing after it may run on a stale plan.
func (db *DB) applyRevision(ctx context.Context, tx neo4j.ManagedTransaction, snap *revision, change *membrane.Change, params map[string]any, res *written) (*written, error) {
	row, err := single(ctx, tx, cypher.Must("apply_change"), params)
	if err != nil {
		return nil, err
	}
	if !applied(row) {
		return nil, errStale
	}
	if err := db.followUp(ctx, tx, snap.revised, change); err != nil {
		return nil, err
	}
	return res, nil
}

// refusedTransient reports whether err is Neo4j's refusal of a statement
// for a transient cause (a deadlock, a lock wait cut short): nothing was
// written, and the revision may run again, as a managed transaction is
// retried on one. A lost connection is not: the write may have committed.
func refusedTransient(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && ne.Classification() == "TransientError"
}

// applied reports whether apply_change's guard held (its row's applied).
func applied(row *neo4j.Record) bool {
	if row == nil {
		return false
	}
	n, _, _ := neo4j.GetRecordValue[int64](row, "applied")
	return n > 0
}

// revision is what a revision plans from (revise_read): the records it
// revises and those it reads, keyed by id, as recordsByID reads them; the
// guards of apply_change, one per id asked for; or, when its idempotency
// key is stored, only the key (its fingerprint, resultIds and edges) and
// the records read with it.
type revision struct {
	revised, read map[string]*membrane.Record
	guards        []map[string]any
	key           map[string]any
	// stored holds, with key, the properties of every record read (the
	// key's result and the revision's records), by id.
	stored map[string]map[string]any
}

// autoRead runs revise_read as one auto-commit read: one round trip, no
// lock.
func autoRead(ctx context.Context, db *DB) func(map[string]any) ([]*neo4j.Record, error) {
	return func(params map[string]any) ([]*neo4j.Record, error) {
		return readOnce(ctx, db, func(tx runner) ([]*neo4j.Record, error) {
			return collect(ctx, tx, cypher.Must("revise_read"), params)
		})
	}
}

// readRevision reads a revision's records and key with run, which runs
// revise_read with the parameters it is given.
func (db *DB) readRevision(ctx context.Context, run func(map[string]any) ([]*neo4j.Record, error), lock, readIDs []string, idem *membrane.Idempotency) (*revision, error) {
	if lock == nil {
		lock = []string{}
	}
	if readIDs == nil {
		readIDs = []string{}
	}
	var k any
	if idem != nil {
		k = idem.Key
	}
	rows, err := run(map[string]any{"ids": lock, "read": readIDs, "key": k})
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if kind, _ := row.Values[1].(string); kind == "key" {
			snap := &revision{stored: map[string]map[string]any{}}
			for _, row := range rows {
				props, _ := row.Values[0].(map[string]any)
				if kind, _ := row.Values[1].(string); kind == "key" {
					snap.key = props
				} else {
					snap.stored[str(props["id"])] = props
				}
			}
			return snap, nil
		}
	}
	t := membrane.TrustFromContext(ctx)
	snap := &revision{revised: make(map[string]*membrane.Record, len(lock)), read: make(map[string]*membrane.Record, len(readIDs))}
	// Every id asked for is guarded, seen or not: a record the request may
	// not see (planned as missing) or that was missing may not change
	// either before the write. The guard is every property read, not the
	// version: an unlocked read may be torn (apply_change).
	stamps := map[string]map[string]any{}
	for _, row := range rows {
		kind, _ := row.Values[1].(string)
		props, _ := row.Values[0].(map[string]any)
		id := str(props["id"])
		// A copy: decoding opens sealed values in place.
		stamps[id] = map[string]any{"id": id, "props": maps.Clone(props)}
		r, err := db.writeView(t, row.Values[0])
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		if kind == "revised" {
			snap.revised[r.ID] = r
		} else {
			snap.read[r.ID] = r
		}
	}
	ids := slices.Concat(lock, readIDs)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		g := stamps[id]
		if g == nil {
			g = map[string]any{"id": id, "props": nil}
		}
		snap.guards = append(snap.guards, g)
	}
	return snap, nil
}

// recordsByID reads the records ids with stmt, keyed by id, for a write
// under the request's trust (see writeView).
func (db *DB) recordsByID(ctx context.Context, tx neo4j.ManagedTransaction, stmt string, ids []string) (map[string]*membrane.Record, error) {
	rows, err := collect(ctx, tx, stmt, map[string]any{"ids": ids})
	if err != nil {
		return nil, err
	}
	t := membrane.TrustFromContext(ctx)
	out := make(map[string]*membrane.Record, len(rows))
	for _, row := range rows {
		r, err := db.writeView(t, row.Values[0])
		if err != nil {
			return nil, err
		}
		if r != nil {
			out[r.ID] = r
		}
	}
	return out, nil
}

// writeView is the record of stored properties (a row's value) as a write
// under trust t reads it. A record whose sealed values do not open (a key
// this server lacks) answers no more than an unknown id would to a request
// that may not see it: it is left out (nil: as missing, NOT_FOUND, or an
// optional record absent) when invisible to the request, and kept as the
// read paths show it, redacted, when the request sees it redacted (the
// plan refuses a redacted record; refuseUnopened catches one it accepted).
// Only a request that would see it in full is told that it does not open
// (FAILED_PRECONDITION): the existence of a record it may see is no secret.
func (db *DB) writeView(t membrane.Trust, value any) (*membrane.Record, error) {
	props, _ := value.(map[string]any)
	r, err := db.recordFromProps(props)
	if errors.Is(err, errUnopened) {
		if r, err = db.readRecord(props); err != nil {
			return nil, err
		}
		switch t.Visibility(r) {
		case membrane.Invisible:
			return nil, nil
		case membrane.Visible:
			return nil, unopenedError(r.ID, errUnopened)
		}
	} else if err != nil {
		return nil, err
	}
	return r, nil
}

// refuseUnopened refuses a planned change that would revise or relate a
// record that did not open (recordsByID kept it redacted): there is
// nothing of it to revise. A plan refuses a redacted record first, so this
// only backs it up.
func refuseUnopened(recs ...map[string]*membrane.Record) error {
	for _, m := range recs {
		for id, r := range m {
			if r.Redacted {
				return unopenedError(id, errUnopened)
			}
		}
	}
	return nil
}

// apply writes c with stmt, a statement taking $creates, $updates, $edges,
// $vectors and $audits (capture_apply) and the extra parameters, then what
// follows it (followUp); before holds the records revised, read those read
// without being changed.
func (db *DB) apply(ctx context.Context, tx neo4j.ManagedTransaction, stmt string, before, read map[string]*membrane.Record, c *membrane.Change, extra map[string]any) error {
	params, err := db.changeParams(before, read, c)
	if err != nil {
		return err
	}
	for k, v := range extra {
		params[k] = v
	}
	row, err := single(ctx, tx, stmt, params)
	if err != nil {
		return err
	}
	if err := checkReused(row); err != nil {
		return err
	}
	return db.followUp(ctx, tx, before, c)
}

// changeParams are the parameters that write c: $creates, $updates,
// $edges, $audits and $vectors. Updated records get only the properties
// that changed from what was read (before): rewriting the rest would cost
// index maintenance, the full-text index above all.
func (db *DB) changeParams(before, read map[string]*membrane.Record, c *membrane.Change) (map[string]any, error) {
	creates := make([]map[string]any, len(c.Creates))
	for i, r := range c.Creates {
		props, err := db.recordProps(r)
		if err != nil {
			return nil, err
		}
		creates[i] = map[string]any{"id": r.ID, "label": r.Type.Label(), "props": props}
	}
	updates := make([]map[string]any, len(c.Updates))
	for i, r := range c.Updates {
		props, err := db.recordProps(r)
		if err != nil {
			return nil, err
		}
		if old := before[r.ID]; old != nil {
			if props, err = db.changedProps(old, r); err != nil {
				return nil, err
			}
		}
		updates[i] = map[string]any{"id": r.ID, "props": props}
	}
	edges := make([]map[string]any, len(c.Edges))
	for i, e := range c.Edges {
		if !e.Predicate.Valid() {
			return nil, fmt.Errorf("apply change: predicate %q outside the vocabulary", e.Predicate)
		}
		edges[i] = map[string]any{"from": e.SourceID, "to": e.TargetID, "type": e.Predicate.RelType(),
			"props": map[string]any{"weight": e.Weight, "createdAt": e.CreatedAt.UTC(), "actor": e.Actor}}
	}
	// Every record an audit entry may describe, for its sensitivity.
	known := map[string]*membrane.Record{}
	for _, m := range []map[string]*membrane.Record{before, read} {
		for id, r := range m {
			known[id] = r
		}
	}
	for _, r := range append(c.Creates, c.Updates...) {
		known[r.ID] = r
	}
	audits := make([]map[string]any, len(c.Audits))
	for i, a := range c.Audits {
		r := known[a.RecordID]
		if r == nil {
			return nil, fmt.Errorf("apply change: audit entry for record %s that the change did not read", a.RecordID)
		}
		props, err := db.auditProps(a, r.Sensitivity)
		if err != nil {
			return nil, err
		}
		audits[i] = map[string]any{"recordId": a.RecordID, "props": props}
	}
	vectors := make([]map[string]any, 0, len(c.Embeddings))
	for _, r := range c.Creates {
		if v, ok := c.Embeddings[r.ID]; ok {
			if db.sealer.Required(r.Sensitivity) {
				// An embedding of sensitive text is sensitive text: not stored.
				continue
			}
			vectors = append(vectors, map[string]any{"id": r.ID, "vector": v, "model": c.EmbeddingModel})
		}
	}
	return map[string]any{"creates": creates, "updates": updates, "edges": edges, "audits": audits, "vectors": vectors}, nil
}

// after is what follows the statement that writes a change, in its
// transaction: records raised or moved in place (their earlier audit
// entries follow), records that crossed the encryption threshold (and of
// those, the ones lowered below it), and the records to attach as new
// ones are (session chains, plan steps).
type after struct {
	moved, crossed []string
	attach         []*membrane.Record
}

// after returns what follows c, whose revised records were before.
// Records that crossed the encryption threshold get what a record created
// at their new level has beside its properties: all are detached
// (seal_detach: no embedding, plan steps or session links), and those
// lowered below it are then linked and get plan steps as new records do.
// Detaching a lowered record first also clears plan steps that a plan
// sealed before they were left out wrote in clear.
func (db *DB) after(before map[string]*membrane.Record, c *membrane.Change) after {
	var a after
	var lowered []*membrane.Record
	for _, r := range c.Updates {
		old := before[r.ID]
		if old == nil || old.Sensitivity != r.Sensitivity || old.Scope != r.Scope {
			a.moved = append(a.moved, r.ID)
		}
		if old == nil || db.sealer.Required(old.Sensitivity) == db.sealer.Required(r.Sensitivity) {
			continue
		}
		a.crossed = append(a.crossed, r.ID)
		if !db.sealer.Required(r.Sensitivity) {
			lowered = append(lowered, r)
		}
	}
	a.attach = append(slices.Clone(c.Creates), lowered...)
	return a
}

// followsUp reports whether c needs a statement after the one that writes
// it (followUp would run one): then the two run in one transaction.
func (db *DB) followsUp(before map[string]*membrane.Record, c *membrane.Change) bool {
	a := db.after(before, c)
	if len(a.moved) > 0 || len(a.crossed) > 0 {
		return true
	}
	for _, r := range a.attach {
		if db.sealer.Required(r.Sensitivity) {
			continue
		}
		if _, _, ok := membrane.SessionPosition(r); ok {
			return true
		}
		if p, ok := r.Payload.(*membrane.PlanGraphPayload); ok && len(p.Nodes) > 0 {
			return true
		}
	}
	return false
}

// followUp runs, in tx, what follows the statement that wrote c (see
// after): the audit entries of moved records re-stamped, crossed records
// detached, new and lowered records linked into session chains and given
// plan steps.
func (db *DB) followUp(ctx context.Context, tx neo4j.ManagedTransaction, before map[string]*membrane.Record, c *membrane.Change) error {
	a := db.after(before, c)
	if err := db.restampAudits(ctx, tx, a.moved); err != nil {
		return err
	}
	if len(a.crossed) > 0 {
		if _, err := single(ctx, tx, cypher.Must("seal_detach"), map[string]any{"ids": a.crossed}); err != nil {
			return err
		}
	}
	if err := db.linkSessions(ctx, tx, a.attach); err != nil {
		return err
	}
	return db.writePlanSteps(ctx, tx, a.attach)
}

// writePlanSteps stores the plan graph records among recs as subgraphs of
// plan steps (see membrane.PlanSubgraph), in the caller's transaction,
// except sealed ones: their steps would spell out the plan in clear. It
// costs a round trip only when there are plans.
func (db *DB) writePlanSteps(ctx context.Context, tx neo4j.ManagedTransaction, recs []*membrane.Record) error {
	var plans []map[string]any
	for _, r := range recs {
		if db.sealer.Required(r.Sensitivity) {
			continue
		}
		steps, links, err := membrane.PlanSubgraph(r)
		if err != nil {
			return err
		}
		if len(steps) == 0 {
			continue
		}
		ss := make([]map[string]any, len(steps))
		for i, s := range steps {
			ss[i] = map[string]any{"id": s.ID, "stepId": s.StepID, "op": s.Op, "params": s.Params, "guards": s.Guards, "position": s.Position}
		}
		ls := make([]map[string]any, len(links))
		for i, l := range links {
			ls[i] = map[string]any{"from": l.From, "to": l.To, "type": l.Type}
		}
		plans = append(plans, map[string]any{"recordId": r.ID, "steps": ss, "links": ls})
	}
	if len(plans) == 0 {
		return nil
	}
	_, err := single(ctx, tx, cypher.Must("plan_steps"), map[string]any{"plans": plans})
	return err
}

// changedProps returns the properties of next that differ from old's, as
// stored (sealed when sensitive). Comparing in clear keeps an unchanged
// sealed payload from being rewritten with a fresh nonce. A record crossing
// the encryption threshold (either way) is rewritten whole: its stored form
// changes even where its values do not (an unchanged payload raised to a
// sealed level must not stay in clear, nor one lowered stay sealed and
// unsearchable).
func (db *DB) changedProps(old, nextRec *membrane.Record) (map[string]any, error) {
	next, err := plainProps(nextRec)
	if err != nil {
		return nil, err
	}
	if db.sealer.Required(old.Sensitivity) != db.sealer.Required(nextRec.Sensitivity) {
		return next, db.seal(nextRec, next)
	}
	prev, err := plainProps(old)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(next))
	for k, v := range next {
		if t, ok := v.(time.Time); ok {
			if p, ok := prev[k].(time.Time); ok && p.Equal(t) {
				continue
			}
		} else if reflect.DeepEqual(prev[k], v) {
			continue
		}
		out[k] = v
	}
	return out, db.seal(nextRec, out)
}
