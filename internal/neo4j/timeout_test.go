package neo4j_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestNeo4jAbortsAtTheContextsDeadline: a transaction run for a context
// with a deadline gets the time the context has left as its Neo4j timeout
// when that is shorter than the configured one (a minute in tests), so
// Neo4j itself aborts the work. The context tells its deadline only once,
// to the store setting the timeout; the driver then sees none and waits,
// so only the database can end the statement early.
func TestNeo4jAbortsAtTheContextsDeadline(t *testing.T) {
	db := neo4jtest.DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a backstop for a failing test
	defer cancel()
	err := db.RunReadOnly(&deadlineOnce{Context: ctx, deadline: time.Now().Add(500 * time.Millisecond)}, slow, nil)
	var ne *driver.Neo4jError
	if !errors.As(err, &ne) || !strings.Contains(ne.Code, "TransactionTimedOut") {
		t.Fatalf("err = %v, want Neo4j's transaction timeout", err)
	}
}

// deadlineOnce reports its deadline to the first caller only.
type deadlineOnce struct {
	context.Context
	deadline time.Time
	told     atomic.Bool
}

func (c *deadlineOnce) Deadline() (time.Time, bool) {
	if c.told.Swap(true) {
		return time.Time{}, false
	}
	return c.deadline, true
}

// slow counts a billion numbers: minutes of work, unless aborted.
const slow = `UNWIND range(1, 1000000000) AS x WITH x WHERE x < 0 RETURN count(x)`

// TestTimedOutTransaction: work that outlives its context's deadline ends
// with TIMEOUT at the deadline, and a context already past its deadline
// begins no transaction at all.
func TestTimedOutTransaction(t *testing.T) {
	db := neo4jtest.DB(t)

	t.Run("slow work ends at the deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		err := db.RunReadOnly(ctx, slow, nil)
		if code := membrane.ErrorCode(err); code != membrane.ETIMEOUT {
			t.Fatalf("code = %s (%v), want %s", code, err, membrane.ETIMEOUT)
		}
	})
	t.Run("a passed deadline begins nothing", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		before := db.TxCount()
		err := db.RunReadOnly(ctx, slow, nil)
		if code := membrane.ErrorCode(err); code != membrane.ETIMEOUT {
			t.Fatalf("code = %s (%v), want %s", code, err, membrane.ETIMEOUT)
		}
		if n := db.TxCount() - before; n != 0 {
			t.Fatalf("%d transactions begun", n)
		}
	})
}
