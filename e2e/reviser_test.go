package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/membrane/membrane/internal/gqltest"
)

// reviser is one client writing a stream of revisions to records of its
// own (so that its writes never conflict with another client's), telling
// the ledger what each acknowledged mutation left behind.
type reviser struct {
	srv  *server
	sc   string
	l    *ledger
	rng  *rand.Rand
	name string
	n    int
	// pool holds this client's active records: the targets of its revisions.
	pool []string
	// ops, when set, restricts the mutations step chooses from.
	ops []string
}

func newReviser(srv *server, sc string, l *ledger, seed uint64) *reviser {
	return &reviser{srv: srv, sc: sc, l: l, rng: rand.New(rand.NewPCG(seed, 0x5eed)), name: fmt.Sprintf("w%d", seed)}
}

const (
	reinforceQ = `mutation($id: ID!) { reinforce(id: $id, actor: "e2e") { id } }`
	supersedeQ = `mutation($id: ID!, $in: RecordInput!) { supersede(oldId: $id, newRecord: $in, actor: "e2e", rationale: "newer") { id } }`
	forkQ      = `mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, actor: "e2e") { id } }`
	retractQ   = `mutation($id: ID!) { retract(id: $id, actor: "e2e", rationale: "wrong") { id } }`
	contestQ   = `mutation($id: ID!, $by: String!) { contest(id: $id, contestingRef: $by, actor: "e2e") { id } }`
	mergeQ     = `mutation($ids: [ID!]!, $in: RecordInput!) { merge(ids: $ids, mergedRecord: $in, actor: "e2e") { id } }`
)

// pick removes and returns a random record of the pool.
func (w *reviser) pick() string {
	i := w.rng.IntN(len(w.pool))
	id := w.pool[i]
	w.pool = slices.Delete(w.pool, i, i+1)
	return id
}

func (w *reviser) fact() map[string]any {
	w.n++
	return factInput(w.sc, fmt.Sprintf("%s-%d", w.name, w.n))
}

// step sends one mutation, chosen at random among create, reinforce,
// supersede, fork, retract, contest and merge. It returns the operation's
// name, the response and any transport error. After a transport error the
// records it touched are in flight: the ledger then allows any status.
func (w *reviser) step(ctx context.Context) (string, gqltest.Response, error) {
	op := "create"
	if len(w.pool) >= 3 {
		ops := w.ops
		if ops == nil {
			ops = []string{"create", "reinforce", "reinforce", "supersede", "supersede", "fork", "retract", "contest", "merge"}
		}
		op = ops[w.rng.IntN(len(ops))]
	}
	var (
		query   string
		vars    map[string]any
		touched []string
		// keep are the touched records that stay active (returned to the pool).
		keep []string
		// then records what an acknowledged mutation did, given the new id.
		then func(newID string)
	)
	switch op {
	case "create":
		query, vars = createQ, map[string]any{"in": w.fact()}
		then = func(id string) { w.l.is(id, "active"); w.pool = append(w.pool, id) }
	case "reinforce":
		x := w.pick()
		query, vars, touched, keep = reinforceQ, map[string]any{"id": x}, []string{x}, []string{x}
		then = func(string) { w.l.is(x, "active") }
	case "supersede":
		x := w.pick()
		query, vars, touched = supersedeQ, map[string]any{"id": x, "in": w.fact()}, []string{x}
		then = func(id string) { w.l.supersede(x, id); w.pool = append(w.pool, id) }
	case "fork":
		x := w.pick()
		query, vars, touched, keep = forkQ, map[string]any{"id": x, "in": w.fact()}, []string{x}, []string{x}
		then = func(id string) { w.l.is(id, "active"); w.pool = append(w.pool, id) }
	case "retract":
		x := w.pick()
		query, vars, touched = retractQ, map[string]any{"id": x}, []string{x}
		then = func(string) { w.l.is(x, "retracted") }
	case "contest":
		// x is contested by y (a CONTESTED_BY edge); y stays active.
		x, y := w.pick(), w.pick()
		query, vars, touched, keep = contestQ, map[string]any{"id": x, "by": y}, []string{x, y}, []string{y}
		then = func(string) { w.l.is(x, "contested") }
	case "merge":
		x, y := w.pick(), w.pick()
		query, vars, touched = mergeQ, map[string]any{"ids": []string{x, y}, "in": w.fact()}, []string{x, y}
		then = func(id string) { w.l.is(x, "retracted"); w.l.is(y, "retracted"); w.l.is(id, "active") }
	}
	w.pool = append(w.pool, keep...)
	resp, err := w.srv.post(ctx, query, vars)
	if err != nil {
		w.l.inFlight(touched...)
		return op, resp, err
	}
	if c := resp.Code(); c == "UNAVAILABLE" || c == "OUTCOME_UNKNOWN" {
		// UNAVAILABLE promises nothing was written, but the ledger stays
		// conservative; OUTCOME_UNKNOWN is a commit whose answer was lost:
		// the records are in flight.
		w.l.inFlight(touched...)
	}
	if len(resp.Errors) > 0 {
		return op, resp, nil
	}
	var data map[string]struct{ ID string }
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return op, resp, fmt.Errorf("decode %s: %w", resp.Data, err)
	}
	for _, v := range data {
		then(v.ID)
	}
	return op, resp, nil
}
