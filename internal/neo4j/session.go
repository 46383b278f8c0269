package neo4j

import (
	"cmp"
	"context"
	"hash/fnv"
	"slices"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// sessionLockBuckets is how many SessionLock nodes session links lock on.
const sessionLockBuckets = 4096

// linkSessions puts the new episodes among recs that belong to a session
// into their session chains (session_link), in the caller's transaction.
// It costs a round trip only when there are such episodes. Sealed records
// are in no chain: their session is not stored in clear (mapping.go).
func (db *DB) linkSessions(ctx context.Context, tx neo4j.ManagedTransaction, recs []*membrane.Record) error {
	type pos struct {
		id, scope, session string
		at                 int64
	}
	var ps []pos
	var buckets []int64
	for _, r := range recs {
		session, at, ok := membrane.SessionPosition(r)
		if !ok || db.sealer.Required(r.Sensitivity) {
			continue
		}
		ps = append(ps, pos{r.ID, r.Scope, session, at.UnixNano()})
		h := fnv.New32a()
		h.Write([]byte(r.Scope + "\x00" + session))
		if b := int64(h.Sum32() % sessionLockBuckets); !slices.Contains(buckets, b) {
			buckets = append(buckets, b)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	// Ascending buckets: two transactions lock in the same order.
	slices.Sort(buckets)
	// Within a session, in chain order (session_link relies on it).
	slices.SortFunc(ps, func(a, b pos) int {
		return cmp.Or(cmp.Compare(a.scope, b.scope), cmp.Compare(a.session, b.session), cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id))
	})
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.id
	}
	_, err := single(ctx, tx, cypher.Must("session_link"), map[string]any{"ids": ids, "buckets": buckets})
	return err
}
