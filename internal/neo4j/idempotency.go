package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// written is what a write answers and its idempotency key replays: the
// records it returns, in order, and the edges it wrote.
type written struct {
	recs  []*membrane.Record
	edges []membrane.Relation
	// replayed is true when an idempotency key answered.
	replayed bool
}

// storedEdge is an edge as an idempotency key stores it (JSON, in the
// key's edges property): only ids, the predicate and the edge's own
// values, never anything of a record.
type storedEdge struct {
	Predicate membrane.Predicate `json:"p"`
	SourceID  string             `json:"s"`
	TargetID  string             `json:"t"`
	Weight    float64            `json:"w"`
	CreatedAt time.Time          `json:"at"`
	Actor     string             `json:"a"`
}

// idempotent runs fn in a write transaction. With a key, a key already
// stored replays its result instead (or is ECONFLICT when it was stored
// for a different request), and a fresh result (its record ids and its
// edges) is stored under the key in the same transaction.
func (db *DB) idempotent(ctx context.Context, idem *membrane.Idempotency, fn func(neo4j.ManagedTransaction) (*written, error)) (*written, error) {
	run := func(tx neo4j.ManagedTransaction) (*written, error) {
		if idem != nil {
			if res, found, err := db.replay(ctx, tx, idem); found || err != nil {
				return res, err
			}
		}
		res, err := fn(tx)
		if err != nil || idem == nil || res.replayed {
			return res, err
		}
		params, err := db.keyParams(idem, res)
		if err != nil {
			return nil, err
		}
		_, err = single(ctx, tx, cypher.Must("idempotency_store"), params)
		return res, err
	}
	res, err := write(ctx, db, run)
	if err != nil && idem != nil && membrane.ErrorCode(err) == membrane.ECONFLICT {
		// A request with the same key may have committed while this one
		// ran (and lost a race to it): answer with its result.
		// With the key found, its replay (or the replay's own conflict:
		// the key was used for a different request) is the answer, not
		// this write's duplicate-key error.
		if replayed, found, rerr := readReplay(ctx, db, idem); found {
			return replayed, rerr
		}
	}
	return res, err
}

// keyParams are the values that store res under idem's key: the
// parameters of idempotency_store, and the row of apply_change's $idem (a
// revision stores its key in the statement that writes it).
func (db *DB) keyParams(idem *membrane.Idempotency, res *written) (map[string]any, error) {
	ids := make([]string, len(res.recs))
	for i, r := range res.recs {
		ids[i] = r.ID
	}
	var edges any // null without edges: the key stores no property
	if len(res.edges) > 0 {
		stored := make([]storedEdge, len(res.edges))
		for i, e := range res.edges {
			stored[i] = storedEdge(e)
		}
		b, err := json.Marshal(stored)
		if err != nil {
			return nil, fmt.Errorf("idempotency edges: %w", err)
		}
		edges = string(b)
	}
	return map[string]any{
		"key": idem.Key, "fingerprint": idem.Fingerprint, "operation": idem.Operation, "resultIds": ids,
		"edges": edges, "now": db.Now().UTC(),
	}, nil
}

func readReplay(ctx context.Context, db *DB, idem *membrane.Idempotency) (*written, bool, error) {
	type result struct {
		res   *written
		found bool
	}
	r, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (result, error) {
		res, found, err := db.replay(ctx, tx, idem)
		return result{res, found}, err
	})
	return r.res, r.found, err
}

// replay returns the stored result of idem's key, if it has one, as the
// request may see it now: its records read again (a replay must not show
// more of a record than a read would), and its stored edges whose ends
// the request may see (membrane.Trust.ReplayEdges).
func (db *DB) replay(ctx context.Context, tx neo4j.ManagedTransaction, idem *membrane.Idempotency) (*written, bool, error) {
	row, err := single(ctx, tx, cypher.Must("idempotency_lookup"), map[string]any{"key": idem.Key})
	if err != nil || row == nil {
		return nil, false, err
	}
	return db.replayKey(ctx, txFetch(ctx, tx), idem, row.Values[0], row.Values[1], row.Values[2])
}

// fetchFunc returns the stored properties of those of the records ids
// that exist.
type fetchFunc func(ids []string) ([]map[string]any, error)

// txFetch fetches records with records_by_ids in tx.
func txFetch(ctx context.Context, tx neo4j.ManagedTransaction) fetchFunc {
	return func(ids []string) ([]map[string]any, error) {
		rows, err := collect(ctx, tx, cypher.Must("records_by_ids"), map[string]any{"ids": ids})
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(rows))
		for i, row := range rows {
			out[i], _ = row.Values[0].(map[string]any)
		}
		return out, nil
	}
}

// replayKey is replay of the key found stored with fingerprint, resultIds
// and edges (idempotency_lookup's columns), reading records with fetch.
func (db *DB) replayKey(ctx context.Context, fetch fetchFunc, idem *membrane.Idempotency, fingerprint, resultIds, storedEdges any) (*written, bool, error) {
	if fp, _ := fingerprint.(string); fp != idem.Fingerprint {
		if idem.Implied {
			return nil, true, idTaken()
		}
		return nil, true, membrane.Errorf(membrane.ECONFLICT, "this idempotency key was already used for a different request")
	}
	ids := strs(resultIds)
	var edges []membrane.Relation
	if s, _ := storedEdges.(string); s != "" {
		var stored []storedEdge
		if err := json.Unmarshal([]byte(s), &stored); err != nil {
			return nil, true, fmt.Errorf("idempotency edges of %q: %w", idem.Operation, err)
		}
		edges = make([]membrane.Relation, len(stored))
		for i, e := range stored {
			edges[i] = membrane.Relation(e)
		}
	}
	// A replay answers only with records the request sees in full: the
	// principal's key may have been narrowed, or a record raised above its
	// ceiling, since the first request, and a replay must not show more of
	// a record than a read would (nor its redaction, which a create never
	// answers with).
	t := membrane.TrustFromContext(ctx)
	rows, err := fetch(ids)
	if err != nil {
		return nil, true, err
	}
	byID := make(map[string]*membrane.Record, len(rows))
	for _, props := range rows {
		r, err := db.writeView(t, props)
		if err != nil {
			return nil, true, err
		}
		if r != nil {
			byID[r.ID] = r
		}
	}
	out := make([]*membrane.Record, 0, len(ids))
	for _, id := range ids {
		if r := byID[id]; r != nil && t.Visibility(r) == membrane.Visible {
			out = append(out, r)
		}
	}
	if len(out) != len(ids) {
		if idem.Implied {
			// Deleted since (the ids are kept, as taken), or not in this
			// request's full view: a taken id either way.
			return nil, true, idTaken()
		}
		return nil, true, membrane.Errorf(membrane.ECONFLICT, "this idempotency key names records that no longer exist or that this request does not see in full")
	}
	if len(edges) > 0 {
		if edges, err = db.replayEdges(fetch, t, edges, byID); err != nil {
			return nil, true, err
		}
	}
	return &written{recs: out, edges: edges, replayed: true}, true, nil
}

// replayEdges returns the stored edges whose ends the request may see
// (membrane.Trust.ReplayEdges), reading the ends that are not among the
// result's records (recs) as a read of relations reads them: one that does
// not open shows redacted, and does not fail the replay.
func (db *DB) replayEdges(fetch fetchFunc, t membrane.Trust, edges []membrane.Relation, recs map[string]*membrane.Record) ([]membrane.Relation, error) {
	ends := maps.Clone(recs)
	var other []string
	for _, e := range edges {
		for _, id := range []string{e.SourceID, e.TargetID} {
			if _, ok := ends[id]; !ok && !slices.Contains(other, id) {
				other = append(other, id)
			}
		}
	}
	if len(other) > 0 {
		rows, err := fetch(other)
		if err != nil {
			return nil, err
		}
		for _, props := range rows {
			r, err := db.readRecord(props)
			if err != nil {
				return nil, err
			}
			ends[r.ID] = r
		}
	}
	return t.ReplayEdges(edges, ends), nil
}
