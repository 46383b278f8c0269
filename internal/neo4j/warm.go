package neo4j

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/membrane/membrane/internal/membrane"
)

// warmSessions is how many point reads Warm runs at once: two keeps both
// cores of a small machine busy without queueing in the pool.
const warmSessions = 2

// Warm runs n point reads of ids that cannot exist, warmSessions at a
// time, then a records page of a scope that cannot exist, so that the
// first requests a server answers do not pay for a cold database: on a
// freshly started Neo4j the first thousand point reads through the served
// binary took about three times as long as later ones (its Bolt and Cypher
// code not compiled by the JIT yet, the statements' plans not cached;
// docs/BENCHMARKS.md, "Cold and warm"). The reads match nothing, so
// warming reads no data and writes nothing. It returns the reads run.
func (db *DB) Warm(ctx context.Context, n int) (int, error) {
	ctx = membrane.NewContextWithTrust(ctx, membrane.SystemTrust("warm-up"))
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, warmSessions)
	for range min(warmSessions, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n) && ctx.Err() == nil; i = next.Add(1) {
				_, err := db.FindRecordByID(ctx, fmt.Sprintf("warm-up-%d-%s", i, membrane.NewID()))
				if membrane.ErrorCode(err) != membrane.ENOTFOUND {
					errs <- fmt.Errorf("warm-up point read: %w", err)
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return int(done.Load()), err
	}
	if err := ctx.Err(); err != nil {
		return int(done.Load()), err
	}
	f := membrane.RecordFilter{Scopes: []string{"warm-up-" + membrane.NewID()}}
	if _, err := db.FindRecords(ctx, f, membrane.DefaultRecordOrder, membrane.Page{First: 20}); err != nil {
		return int(done.Load()), fmt.Errorf("warm-up records page: %w", err)
	}
	return int(done.Load()), nil
}
