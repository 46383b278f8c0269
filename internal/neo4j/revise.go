package neo4j

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.RevisionStore = (*DB)(nil)

// Revise runs one revision as one write transaction: it reads the records
// in lock under a write lock (all must exist) and those in read without
// one (they may be missing), calls plan with them, and applies the planned
// change. Of two revisions racing on a record, the second to take the lock
// plans against the first's result. With idem, a key already stored
// replays its result instead (see idempotent), and the result and the
// edges the change wrote are stored under the key.
func (db *DB) Revise(ctx context.Context, idem *membrane.Idempotency, lock, readIDs []string, plan membrane.PlanFunc) (*membrane.Revised, error) {
	// The key is looked up by the statement that locks the records, and
	// stored by the one that writes the change: a keyed revision costs no
	// statement more than one without a key.
	res, err := db.keyed(ctx, idem, false, func(tx neo4j.ManagedTransaction) (*written, error) {
		locked, read, key, err := db.lockRecords(ctx, tx, lock, readIDs, idem)
		if err != nil {
			return nil, err
		}
		if key != nil {
			res, _, err := db.replayKey(ctx, tx, idem, key["fingerprint"], key["resultIds"], key["edges"])
			return res, err
		}
		for _, id := range lock {
			if locked[id] == nil {
				return nil, membrane.Errorf(membrane.ENOTFOUND, "record %q not found", id)
			}
		}
		change, err := plan(locked, read)
		if err != nil {
			return nil, err
		}
		if err := refuseUnopened(locked, read); err != nil {
			return nil, err
		}
		res := &written{recs: []*membrane.Record{change.Result}, edges: change.Edges}
		store := []map[string]any{}
		if idem != nil {
			p, err := db.keyParams(idem, res)
			if err != nil {
				return nil, err
			}
			store, res.stored = append(store, p), true
		}
		if err := db.applyChange(ctx, tx, locked, read, change, store); err != nil {
			return nil, err
		}
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	return &membrane.Revised{Record: res.recs[0], Edges: res.edges}, nil
}

// lockRecords reads, in one statement (lock_records), the records lock
// under a write lock and those of read without one, each keyed by id, as
// recordsByID reads them; or, when idem's key is stored, only the key (its
// fingerprint, resultIds and edges).
func (db *DB) lockRecords(ctx context.Context, tx neo4j.ManagedTransaction, lock, read []string, idem *membrane.Idempotency) (map[string]*membrane.Record, map[string]*membrane.Record, map[string]any, error) {
	if read == nil {
		read = []string{}
	}
	var k any
	if idem != nil {
		k = idem.Key
	}
	rows, err := collect(ctx, tx, cypher.Must("lock_records"), map[string]any{"ids": lock, "read": read, "key": k})
	if err != nil {
		return nil, nil, nil, err
	}
	// A stored key answers alone: a replay revises nothing, so it is not
	// refused for a record that does not open on this server.
	for _, row := range rows {
		if kind, _ := row.Values[1].(string); kind == "key" {
			key, _ := row.Values[0].(map[string]any)
			return nil, nil, key, nil
		}
	}
	t := membrane.TrustFromContext(ctx)
	lockedRecs, readRecs := make(map[string]*membrane.Record, len(lock)), make(map[string]*membrane.Record, len(read))
	for _, row := range rows {
		kind, _ := row.Values[1].(string)
		r, err := db.writeView(t, row.Values[0])
		if err != nil {
			return nil, nil, nil, err
		}
		if r == nil {
			continue
		}
		if kind == "locked" {
			lockedRecs[r.ID] = r
		} else {
			readRecs[r.ID] = r
		}
	}
	return lockedRecs, readRecs, nil, nil
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

// applyChange writes a planned change, and the idempotency key of the
// revision when key holds one (keyParams). Updated records get only the
// properties that changed from what was read (before): rewriting the rest
// would cost index maintenance, the full-text index above all.
func (db *DB) applyChange(ctx context.Context, tx neo4j.ManagedTransaction, before, read map[string]*membrane.Record, c *membrane.Change, key []map[string]any) error {
	return db.apply(ctx, tx, cypher.Must("apply_change"), before, read, c, map[string]any{"idem": key})
}

// apply writes c with stmt, a statement taking $creates, $updates, $edges,
// $vectors and $audits (apply_change, or capture_apply for captures) and
// the extra parameters; before holds the records read under lock, read
// those read without.
func (db *DB) apply(ctx context.Context, tx neo4j.ManagedTransaction, stmt string, before, read map[string]*membrane.Record, c *membrane.Change, extra map[string]any) error {
	creates := make([]map[string]any, len(c.Creates))
	for i, r := range c.Creates {
		props, err := db.recordProps(r)
		if err != nil {
			return err
		}
		creates[i] = map[string]any{"id": r.ID, "label": r.Type.Label(), "props": props}
	}
	updates := make([]map[string]any, len(c.Updates))
	for i, r := range c.Updates {
		props, err := db.recordProps(r)
		if err != nil {
			return err
		}
		if old := before[r.ID]; old != nil {
			if props, err = db.changedProps(old, r); err != nil {
				return err
			}
		}
		updates[i] = map[string]any{"id": r.ID, "props": props}
	}
	edges := make([]map[string]any, len(c.Edges))
	for i, e := range c.Edges {
		if !e.Predicate.Valid() {
			return fmt.Errorf("apply change: predicate %q outside the vocabulary", e.Predicate)
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
			return fmt.Errorf("apply change: audit entry for record %s that the change did not read", a.RecordID)
		}
		props, err := db.auditProps(a, r.Sensitivity)
		if err != nil {
			return err
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
	params := map[string]any{"creates": creates, "updates": updates, "edges": edges, "audits": audits, "vectors": vectors}
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
	// Records raised or moved in place: their earlier audit entries follow.
	var moved []string
	for _, r := range c.Updates {
		if old := before[r.ID]; old == nil || old.Sensitivity != r.Sensitivity || old.Scope != r.Scope {
			moved = append(moved, r.ID)
		}
	}
	if err := db.restampAudits(ctx, tx, moved); err != nil {
		return err
	}
	// Records that crossed the encryption threshold get what a record
	// created at their new level has beside its properties: all are
	// detached (seal_detach: no embedding, plan steps or session links),
	// and those lowered below it are then linked and get plan steps as new
	// records do. Detaching a lowered record first also clears plan steps
	// that a plan sealed before they were left out wrote in clear.
	var crossed []string
	var lowered []*membrane.Record
	for _, r := range c.Updates {
		old := before[r.ID]
		if old == nil || db.sealer.Required(old.Sensitivity) == db.sealer.Required(r.Sensitivity) {
			continue
		}
		crossed = append(crossed, r.ID)
		if !db.sealer.Required(r.Sensitivity) {
			lowered = append(lowered, r)
		}
	}
	if len(crossed) > 0 {
		if _, err := single(ctx, tx, cypher.Must("seal_detach"), map[string]any{"ids": crossed}); err != nil {
			return err
		}
	}
	attach := append(slices.Clone(c.Creates), lowered...)
	if err := db.linkSessions(ctx, tx, attach); err != nil {
		return err
	}
	return db.writePlanSteps(ctx, tx, attach)
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
