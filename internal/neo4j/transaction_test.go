package neo4j_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestCommitUncertain classifies the errors the driver returns for a write
// transaction whose work was done and whose COMMIT then failed, built as
// the driver builds them: only an answer of the server proves that nothing
// was committed.
func TestCommitUncertain(t *testing.T) {
	transient := &driver.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection closed while waiting for the answer", &driver.ConnectivityError{Inner: io.EOF}, true},
		{"connection reset", &driver.ConnectivityError{Inner: &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}}, true},
		{"the request's deadline passed during the commit", context.DeadlineExceeded, true},
		{"the request was cancelled during the commit", context.Canceled, true},
		{"the server failed inside the commit", &driver.Neo4jError{Code: "Neo.DatabaseError.Transaction.TransactionCommitFailed", Msg: "commit failed"}, true},
		{"an error the driver does not classify", &driver.UsageError{Message: "invalid transaction handle"}, true},
		{"the server refused: constraint", &driver.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed", Msg: "exists"}, false},
		{"the server refused: terminated (reclassified as a client error)", &driver.Neo4jError{Code: "Neo.TransientError.Transaction.Terminated", Msg: "terminated"}, false},
		{"the server refused: transaction timeout", &driver.Neo4jError{Code: "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration", Msg: "timed out"}, false},
		{"the server refused, wrapped", fmt.Errorf("create 1 records: %w", transient), false},
		{"retries used up on refusals", &driver.TransactionExecutionLimit{Cause: "timeout (exceeded max retry time: 1.5s)", Errors: []error{transient, transient}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := neo4j.CommitUncertain(tt.err); got != tt.want {
				t.Fatalf("CommitUncertain(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestLostCommitAnswer runs transactions through a Bolt proxy on loopback
// (neo4jtest.BoltProxy) that swallows Neo4j's answer to one message and then closes the
// connection, as a network failure or a Neo4j crash right after the commit
// would. A write whose COMMIT answer is lost did commit: it is
// OUTCOME_UNKNOWN, never UNAVAILABLE (which promises nothing was written),
// and its retry (the same request: the same implied idempotency key)
// answers with the record without writing it twice. A point read whose
// answer is lost is read again and answers; a revision's guarded write
// (one auto-commit statement) whose answer is lost is OUTCOME_UNKNOWN and
// its keyed retry replays it; and a write whose
// connection is lost before its COMMIT is retried by the driver and
// written once.
func TestLostCommitAnswer(t *testing.T) {
	p := neo4jtest.NewBoltProxy(t)
	db := p.Open(t)
	shared := neo4jtest.DB(t)

	t.Run("write: the commit's answer is lost", func(t *testing.T) {
		scope := neo4jtest.Scope(t)
		in := ingested(t, scope, "lost answer")
		// No key: the one the record's chosen id implies, as a request
		// gets it (graph.idempotency).
		idem := membrane.ImpliedIdempotency("test", "createRecords", "lost answer", []string{in.Record.ID})
		p.DropAnswerTo(neo4jtest.SigCommit)
		_, err := db.CreateRecords(sysCtx(), idem, []*membrane.Ingested{in})
		p.Wait(t)
		if code := membrane.ErrorCode(err); code != membrane.EUNKNOWN {
			t.Fatalf("code = %s (%v), want %s", code, err, membrane.EUNKNOWN)
		}
		if _, err := shared.FindRecordByID(sysCtx(), in.Record.ID); err != nil {
			t.Fatalf("the write committed, but: %v", err)
		}
		again, err := db.CreateRecords(sysCtx(), idem, []*membrane.Ingested{ingested(t, scope, "lost answer")})
		if err != nil || len(again) != 1 || again[0].ID != in.Record.ID {
			t.Fatalf("the retry = %v, %v; want the record %s", again, err, in.Record.ID)
		}
		if n := len(inScope(t, shared, scope)); n != 1 {
			t.Fatalf("%d records after the retry, want 1", n)
		}
	})
	t.Run("revision: the guarded write's answer is lost", func(t *testing.T) {
		// The write is one auto-commit statement: its answer lost, it may
		// have committed (it did), so it is OUTCOME_UNKNOWN and not run
		// again; the same request with its key then replays it.
		rec := neo4jtest.Create(t, shared, t0, fact(neo4jtest.Scope(t), "lost revision", 0.5, nil))[0]
		key := "lost-" + membrane.NewID()
		idem := &membrane.Idempotency{Key: key, Fingerprint: "f", Operation: "contest"}
		contest := func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
			return membrane.Contest(locked[rec.ID], "ticket", nil, membrane.RevisionMeta{Actor: "test"}, t0)
		}
		neo4j.SetBeforeReviseWrite(db, func(int) { p.DropAnswerTo(neo4jtest.SigRun) })
		_, err := db.Revise(sysCtx(), idem, []string{rec.ID}, nil, contest)
		neo4j.SetBeforeReviseWrite(db, nil)
		p.Wait(t)
		if code := membrane.ErrorCode(err); code != membrane.EUNKNOWN {
			t.Fatalf("code = %s (%v), want %s", code, err, membrane.EUNKNOWN)
		}
		again, err := db.Revise(sysCtx(), idem, []string{rec.ID}, nil, contest)
		if err != nil || again.Record.Version != 2 {
			t.Fatalf("the retry = %+v, %v; want the first write's result, at version 2", again, err)
		}
		if got, err := shared.FindRecordByID(sysCtx(), rec.ID); err != nil || got.Version != 2 {
			t.Fatalf("the record after the retry: %+v, %v; want it contested once (version 2)", got, err)
		}
	})
	t.Run("read: the answer is lost", func(t *testing.T) {
		// A point read is one auto-commit statement (no COMMIT of its
		// own): when its answer is lost with the connection, the store
		// reads again on another one and answers.
		rec := neo4jtest.Create(t, shared, t0, fact(neo4jtest.Scope(t), "read", 0.5, nil))[0]
		p.DropAnswerTo(neo4jtest.SigRun)
		tx := db.TxCount()
		got, err := db.FindRecordByID(sysCtx(), rec.ID)
		p.Wait(t)
		if err != nil || got.ID != rec.ID {
			t.Fatalf("FindRecordByID = %v, %v; want the record %s", got, err, rec.ID)
		}
		if n := db.TxCount() - tx; n != 2 {
			t.Fatalf("%d attempts, want 2 (the lost one and its retry)", n)
		}
	})
	t.Run("write: the statement's answer is lost before the commit", func(t *testing.T) {
		scope := neo4jtest.Scope(t)
		p.DropAnswerTo(neo4jtest.SigRun)
		_, err := db.CreateRecords(sysCtx(), nil, []*membrane.Ingested{ingested(t, scope, "retried")})
		p.Wait(t)
		if err != nil {
			t.Fatalf("the driver's retry on a new connection failed: %v", err)
		}
		if n := len(inScope(t, shared, scope)); n != 1 {
			t.Fatalf("%d records, want 1", n)
		}
	})
}

// TestPointReadOneRoundTrip counts the Bolt requests a point read sends
// through the proxy: one auto-commit RUN (with its PULL), no BEGIN and no
// COMMIT (issue 13: a point read is one round trip).
func TestPointReadOneRoundTrip(t *testing.T) {
	p := neo4jtest.NewBoltProxy(t)
	db := p.Open(t)
	shared := neo4jtest.DB(t)
	// RUN and PULL go together; no BEGIN, no COMMIT.
	rec := neo4jtest.Create(t, shared, t0, fact(neo4jtest.Scope(t), "one trip", 0.5, nil))[0]
	begins, commits, runs := p.Sent(neo4jtest.SigBegin), p.Sent(neo4jtest.SigCommit), p.Sent(neo4jtest.SigRun)
	if _, err := db.FindRecordByID(sysCtx(), rec.ID); err != nil {
		t.Fatal(err)
	}
	if b, c, r := p.Sent(neo4jtest.SigBegin)-begins, p.Sent(neo4jtest.SigCommit)-commits, p.Sent(neo4jtest.SigRun)-runs; b != 0 || c != 0 || r != 1 {
		t.Fatalf("a point read sent %d BEGIN, %d COMMIT and %d RUN, want 0, 0 and 1", b, c, r)
	}
}

// TestRevisionTwoRoundTrips counts the Bolt requests a revision sends
// through the proxy: its read and its guarded write, each one auto-commit
// RUN (with its PULL), no BEGIN and no COMMIT; a keyed one no more.
func TestRevisionTwoRoundTrips(t *testing.T) {
	p := neo4jtest.NewBoltProxy(t)
	db := p.Open(t)
	shared := neo4jtest.DB(t)
	meta := membrane.RevisionMeta{Actor: "test"}
	for _, tc := range []struct {
		name  string
		keyed bool
		plan  func(r *membrane.Record) (*membrane.Change, error)
	}{
		{"contest", false, func(r *membrane.Record) (*membrane.Change, error) {
			return membrane.Contest(r, "ticket-1", nil, meta, t0)
		}},
		{"supersede", false, func(r *membrane.Record) (*membrane.Change, error) {
			return membrane.DefaultPolicy().Supersede(r, fact(r.Scope, "next", 0.5, nil), meta, t0)
		}},
		{"supersede with an idempotency key", true, func(r *membrane.Record) (*membrane.Change, error) {
			return membrane.DefaultPolicy().Supersede(r, fact(r.Scope, "next", 0.5, nil), meta, t0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := neo4jtest.Create(t, shared, t0, fact(neo4jtest.Scope(t), "two trips", 0.5, nil))[0]
			var idem *membrane.Idempotency
			if tc.keyed {
				key := "trips-" + membrane.NewID()
				idem = &membrane.Idempotency{Key: key, Fingerprint: "f", Operation: "supersede"}
			}
			begins, commits, runs := p.Sent(neo4jtest.SigBegin), p.Sent(neo4jtest.SigCommit), p.Sent(neo4jtest.SigRun)
			if _, err := db.Revise(sysCtx(), idem, []string{rec.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
				return tc.plan(locked[rec.ID])
			}); err != nil {
				t.Fatal(err)
			}
			if b, c, r := p.Sent(neo4jtest.SigBegin)-begins, p.Sent(neo4jtest.SigCommit)-commits, p.Sent(neo4jtest.SigRun)-runs; b != 0 || c != 0 || r != 2 {
				t.Fatalf("a revision sent %d BEGIN, %d COMMIT and %d RUN, want 0, 0 and 2", b, c, r)
			}
		})
	}
}

func ingested(t *testing.T, scope, subject string) *membrane.Ingested {
	t.Helper()
	in := fact(scope, subject, 0.5, nil)
	in.ID = ptr(scope + ":" + subject)
	r, err := membrane.DefaultPolicy().BuildRecord(in, t0)
	if err != nil {
		t.Fatal(err)
	}
	return &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", t0)}
}

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
