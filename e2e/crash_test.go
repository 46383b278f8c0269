package e2e_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/apptest"
)

// TestKillMidRevisions kills the server with SIGKILL while several clients
// stream revisions at it, restarts it on the same database, and checks
// that nothing is half-written: every revision edge has its audit entries,
// no supersede chain has two heads, every record is whole with its creation
// audit, and every mutation a client saw acknowledged is there.
func TestKillMidRevisions(t *testing.T) {
	srv := startProcess(t, apptest.Options{Neo4jURI: neo4jURI(t), EncryptionKey: newEncryptionKey(t)})
	sc := scope(t)
	cleanupScope(t, sc)
	l := newLedger()

	const workers = 6
	// Kill once this many mutations were acknowledged (or after the time
	// limit, on a very slow machine): enough for every kind of revision.
	const killAfter, killDeadline = 600, 60 * time.Second
	var (
		acked, killed atomic.Int64
		wg            sync.WaitGroup
		mu            sync.Mutex
		failures      []string
		inFlight      atomic.Int64
		ops           = map[string]int{}
	)
	enough := make(chan struct{})
	var enoughOnce sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newReviser(srv, sc, l, uint64(i+1))
			for ctx.Err() == nil {
				inFlight.Add(1)
				op, resp, err := w.step(ctx)
				inFlight.Add(-1)
				if err != nil {
					if killed.Load() == 0 {
						mu.Lock()
						failures = append(failures, op+": "+err.Error())
						mu.Unlock()
					}
					return // the server is gone
				}
				if len(resp.Errors) > 0 {
					mu.Lock()
					failures = append(failures, op+": "+resp.Errors[0].Message)
					mu.Unlock()
					continue
				}
				mu.Lock()
				ops[op]++
				mu.Unlock()
				if acked.Add(1) >= killAfter {
					enoughOnce.Do(func() { close(enough) })
				}
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(killDeadline):
	}
	killed.Store(1)
	busy := inFlight.Load()
	srv.Kill()
	wg.Wait()
	t.Logf("killed the server with %d requests in flight after %d acknowledged mutations %v (%s)", busy, acked.Load(), ops, l)
	for _, op := range []string{"create", "reinforce", "supersede", "fork", "retract", "contest", "merge"} {
		if ops[op] == 0 {
			t.Errorf("no %s was acknowledged before the kill", op)
		}
	}
	for _, f := range failures {
		t.Errorf("before the kill: %s", f)
	}
	if acked.Load() < 50 {
		t.Fatalf("only %d mutations acknowledged before the kill", acked.Load())
	}

	t0 := time.Now()
	srv.Restart()
	t.Logf("restarted on the same database in %s", time.Since(t0).Round(time.Millisecond))
	l.verify(t, srv, sc)
}
