// Package neo4j stores Membrane's records, audit trail and relations in Neo4j.
// It implements the service interfaces of internal/membrane; all Cypher comes
// from the cypher package.
package neo4j

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
)

// Config says how to reach Neo4j.
type Config struct {
	URI      string
	User     string
	Password string
	Database string
	// MaxPoolSize bounds the driver's connection pool.
	MaxPoolSize int
	// TxTimeout is the server-side timeout of every transaction.
	TxTimeout time.Duration
	// Sealer encrypts sensitive records at rest. Nil means no keys: records
	// of sensitivity high and above are refused.
	Sealer *membrane.Sealer
	// Observers watch every transaction (metrics, tracing); none costs
	// nothing.
	Observers []Observer
	// Waiting, when set, is told that Neo4j does not answer yet: on the
	// first failed attempt, then every WaitReport (5 s when zero) while
	// Open keeps trying, with the time waited and the last error.
	Waiting    func(waited time.Duration, err error)
	WaitReport time.Duration
}

// Observer watches the store's transactions. Transaction is called as one
// starts, with its mode: "read" or "write" for a request's transactions
// (managed ones, and the single auto-commit statements of readOnce and
// writeOnce), "autocommit" for the sweeps' auto-commit statements. It may
// return a derived context (a tracing span) that the transaction then runs
// in. ended is called once when the transaction is over, with how many
// times its work function ran (more than once means the driver retried it)
// and the code of the mapped error ("" on success; see
// membrane.ErrorCode).
//
// The interface names no driver or metrics type, so that implementations
// import neither.
type Observer interface {
	Transaction(ctx context.Context, mode string) (context.Context, func(attempts int, code string))
}

// DB is Membrane's Neo4j store. It holds the one driver of the process and
// is safe for concurrent use.
type DB struct {
	driver   neo4j.DriverWithContext
	database string
	txConf   []func(*neo4j.TransactionConfig)
	sealer   *membrane.Sealer
	observer []Observer
	// txTimeout is the configured transaction timeout (0: Neo4j's own).
	txTimeout time.Duration

	// Now is the clock; tests replace it.
	Now func() time.Time

	// AfterWrite, when set (before first use), is called after every
	// committed write transaction: the change feed's hub is poked, so local
	// subscribers hear of a change at once instead of at its next tick.
	AfterWrite func()

	// txCount counts transactions begun, so tests can assert that a query
	// costs a constant number of round trips.
	txCount atomic.Int64

	// textMatches bounds the full-text matches a records text filter
	// reads (membrane.MaxTextMatches when 0); tests lower it.
	textMatches int
	// scopeEntities is the most entities of a scope that linkMentions
	// reads whole (entitiesReadWhole when 0); tests set it to
	// reach either way with a few entities.
	scopeEntities int
	// maxAuditRefs bounds the references a prune tombstone stores
	// (membrane.MaxAuditRefs unless a test sets it lower).
	maxAuditRefs int

	// failed holds the records Migrate's re-index could not open (by id,
	// with the key id that sealed them), and unreadable how many sealed
	// records this server cannot open (Unreadable).
	failed     map[string]string
	unreadable int
	// byKey breaks unreadable down by key id (UnreadableByKey), and
	// changed holds the key ids whose stored check value differs from
	// this server's key (ChangedKeys).
	byKey   map[string]int
	changed []string

	// schemaNode names the MembraneSchema node that records the schema
	// version, and dataScopes narrows the check for data in the database
	// to the records of those scopes (nil: every record): tests set both
	// to stand in for a database of their own.
	schemaNode string
	dataScopes []string

	// beforeReviseWrite, when a test sets it, is called in every run of a
	// revision but the last, locked one, between its read and its guarded
	// write, with the run's number (from 1): what it writes is what a
	// concurrent request could.
	beforeReviseWrite func(attempt int)
}

// Open creates the driver and waits, until ctx ends, for Neo4j to answer.
func Open(ctx context.Context, c Config) (*DB, error) {
	auth := neo4j.NoAuth()
	if c.User != "" {
		auth = neo4j.BasicAuth(c.User, c.Password, "")
	}
	drv, err := neo4j.NewDriverWithContext(c.URI, auth, func(cfg *config.Config) {
		if c.MaxPoolSize > 0 {
			cfg.MaxConnectionPoolSize = c.MaxPoolSize
		}
		// Fail fast when Neo4j is down: a request then gets UNAVAILABLE
		// within about 2 s instead of hanging, and the client (which owns
		// its retry policy) retries. With 10 s / 15 s here a request waited
		// up to ~15 s while the driver retried a refused connection.
		// Connecting on a LAN or loopback takes milliseconds; 2 s still
		// covers a slow network.
		cfg.SocketConnectTimeout = 2 * time.Second
		// A borrow waits this long for a free pooled connection under load.
		cfg.ConnectionAcquisitionTimeout = 5 * time.Second
		// The driver sleeps 1.8-2.2 s before its first retry and checks
		// this bound before each sleep: with 1.5 s a refused connection
		// fails after ~2 s (two attempts), and a transaction that fails
		// transiently (a deadlock) within 1.5 s is retried once. One
		// failing later is not retried: the client gets UNAVAILABLE and
		// retries. A dead pooled connection (Neo4j restarted) is retried at
		// once, without sleeping. Schema changes retry on their own (schemaStatement).
		cfg.MaxTransactionRetryTime = 1500 * time.Millisecond
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j driver for %s: %w", c.URI, err)
	}
	sealer := c.Sealer
	if sealer == nil {
		if sealer, err = membrane.NewSealer(membrane.SensitivityHigh, nil, ""); err != nil {
			return nil, err
		}
	}
	db := &DB{driver: drv, database: c.Database, Now: time.Now, sealer: sealer, observer: c.Observers, txTimeout: c.TxTimeout,
		schemaNode: schemaNodeID}
	if c.TxTimeout > 0 {
		db.txConf = append(db.txConf, neo4j.WithTxTimeout(c.TxTimeout))
	}
	start, reported := time.Now(), time.Time{}
	every := c.WaitReport
	if every <= 0 {
		every = 5 * time.Second
	}
	for {
		err = drv.VerifyConnectivity(ctx)
		if err == nil {
			return db, nil
		}
		// A silent wait looked like a hang (issue 12): say so at once,
		// then every few seconds.
		if now := time.Now(); c.Waiting != nil && (reported.IsZero() || now.Sub(reported) >= every) {
			reported = now
			c.Waiting(now.Sub(start).Round(time.Second), err)
		}
		select {
		case <-ctx.Done():
			_ = drv.Close(context.Background())
			return nil, fmt.Errorf("neo4j at %s not reachable after %s: %w", RedactedURI(c.URI), time.Since(start).Round(time.Second), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// RedactedURI is uri without a password, for logs and errors (a Bolt URI
// may carry user info).
func RedactedURI(uri string) string {
	if u, err := url.Parse(uri); err == nil {
		return u.Redacted()
	}
	return "(unparsable neo4j uri)"
}

// Close closes the driver.
func (db *DB) Close(ctx context.Context) error { return db.driver.Close(ctx) }

// TxCount returns how many transactions this DB has begun.
func (db *DB) TxCount() int64 { return db.txCount.Load() }

// schemaStatement runs one statement of the schema, retrying transient
// failures and lost races until ctx ends. Processes that start together on
// a fresh database (replicas, the test packages) create the same indexes at
// once: they deadlock, or both pass IF NOT EXISTS and one commit fails
// (CONFLICT; run again, the statement finds the index and does nothing).
// The driver's own retries are kept short for requests (see Open), too
// short for a schema change that takes seconds.
func (db *DB) schemaStatement(ctx context.Context, stmt string) error {
	for {
		_, err := neo4j.ExecuteQuery(ctx, db.driver, stmt, nil, neo4j.EagerResultTransformer,
			neo4j.ExecuteQueryWithDatabase(db.database))
		if code := membrane.ErrorCode(mapError(err)); err == nil || (code != membrane.EUNAVAILABLE && code != membrane.ECONFLICT) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Ping reports whether Neo4j answers a query.
func (db *DB) Ping(ctx context.Context) error {
	_, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := single(ctx, tx, cypher.Must("ping"), nil)
		return struct{}{}, err
	})
	return err
}

// session opens a session that shares the process's bookmark manager, so
// that in a Neo4j cluster (neo4j:// routing, reads served by followers)
// every transaction of this process sees at least what the ones before it
// saw or wrote: a request reads its own writes, and a subscription that
// learned the change feed's head from one member never reads the entries
// up to it from a member that has not applied them yet (it would skip
// them). On a single instance the bookmarks are always satisfied.
func (db *DB) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return db.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: db.database,
		BookmarkManager: db.driver.ExecuteQueryBookmarkManager()})
}

// read runs fn in a managed read transaction (retried on transient errors).
func read[T any](ctx context.Context, db *DB, fn func(neo4j.ManagedTransaction) (T, error)) (T, error) {
	return execute(ctx, db, neo4j.AccessModeRead, fn)
}

// readOnce runs fn, which runs exactly one read-only statement, as an
// auto-commit transaction: one Bolt round trip (RUN and PULL sent
// together), where a managed transaction takes two (its COMMIT is a round
// trip of its own), about 0.1 ms of a point read's 0.45 here
// (docs/BENCHMARKS.md, "Served latency"). A read commits
// nothing whose outcome could be lost, so a failure the driver calls
// retryable (a pooled connection Neo4j dropped, a transient error) is
// retried once, at once, on another connection, as the driver retries a
// managed transaction on a dead connection. fn must not run a second
// statement: two auto-commit statements do not read one snapshot. Unlike
// autocommit (the sweeps' writes, under a job's deadline, never retried),
// it runs under the request's transaction configuration and profile.
func readOnce[T any](ctx context.Context, db *DB, fn func(runner) (T, error)) (T, error) {
	var zero T
	conf, err := db.txConfig(ctx)
	if err != nil {
		return zero, err
	}
	ctx, ended := db.observe(ctx, "read")
	attempts := 0
	var v T
	for {
		attempts++
		db.txCount.Add(1)
		s := db.session(ctx, neo4j.AccessModeRead)
		v, err = fn(autoCommit{s, conf})
		s.Close(ctx)
		if err == nil || attempts > 1 || !neo4j.IsRetryable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		err = failed(ctx, err)
		ended(attempts, membrane.ErrorCode(err))
		return zero, err
	}
	ended(attempts, "")
	return v, nil
}

// writeOnce runs one write statement, expected to return at most one row,
// as an auto-commit transaction: one Bolt round trip (RUN and PULL sent
// together, the commit implied by the statement's end), where a managed
// transaction takes two (its COMMIT is a round trip of its own). The
// statement commits whole or not at all. It is not retried: a refusal the
// server answered (a ClientError or TransientError) proves nothing was
// written and is mapped as a managed transaction's is, and any other
// failure (a lost connection, the context ending while the answer was
// awaited) may have come after the commit: EUNKNOWN (commitUncertain).
func writeOnce(ctx context.Context, db *DB, stmt string, params map[string]any) (*neo4j.Record, error) {
	conf, err := db.txConfig(ctx)
	if err != nil {
		return nil, err
	}
	ctx, ended := db.observe(ctx, "write")
	db.txCount.Add(1)
	s := db.session(ctx, neo4j.AccessModeWrite)
	defer s.Close(ctx)
	row, err := single(ctx, autoCommit{s, conf}, stmt, params)
	if err != nil {
		if commitUncertain(err) {
			err = fmt.Errorf("%w: %w", outcomeUnknown(), err)
		} else {
			err = failed(ctx, err)
		}
		ended(1, membrane.ErrorCode(err))
		return nil, err
	}
	ended(1, "")
	if db.AfterWrite != nil && ctx.Value(unannounced{}) == nil {
		db.AfterWrite()
	}
	return row, nil
}

// autoCommit runs each statement as an auto-commit transaction of its
// session, with a request's transaction configuration (timeout, metadata).
type autoCommit struct {
	s    neo4j.SessionWithContext
	conf []func(*neo4j.TransactionConfig)
}

func (a autoCommit) Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error) {
	return a.s.Run(ctx, cypher, params, a.conf...)
}

// write runs fn in a managed write transaction (retried on transient
// errors): everything fn writes commits together or not at all.
func write[T any](ctx context.Context, db *DB, fn func(neo4j.ManagedTransaction) (T, error)) (T, error) {
	return execute(ctx, db, neo4j.AccessModeWrite, fn)
}

func execute[T any](ctx context.Context, db *DB, mode neo4j.AccessMode, fn func(neo4j.ManagedTransaction) (T, error)) (T, error) {
	var zero T
	conf, err := db.txConfig(ctx)
	if err != nil {
		return zero, err
	}
	name := "write"
	if mode == neo4j.AccessModeRead {
		name = "read"
	}
	ctx, ended := db.observe(ctx, name)
	// attempts counts the runs of the work function: the driver calls it
	// again, in this goroutine, for every retry of a transient failure.
	// committing says whether the last run returned without error, so that
	// the driver went on to COMMIT it: a failure from then on may have
	// come after Neo4j committed.
	attempts, committing := 0, false
	s := db.session(ctx, mode)
	defer s.Close(ctx)
	work := func(tx neo4j.ManagedTransaction) (any, error) {
		db.txCount.Add(1)
		attempts++
		committing = false
		v, err := fn(tx)
		committing = err == nil
		return v, err
	}
	var v any
	if mode == neo4j.AccessModeRead {
		v, err = s.ExecuteRead(ctx, work, conf...)
	} else {
		v, err = s.ExecuteWrite(ctx, work, conf...)
	}
	if err != nil {
		if mode == neo4j.AccessModeWrite && committing && commitUncertain(err) {
			// Checked before the deadline: a commit cut short by the
			// request's deadline may have committed all the same.
			err = fmt.Errorf("%w: %w", outcomeUnknown(), err)
		} else {
			err = failed(ctx, err)
		}
		ended(attempts, membrane.ErrorCode(err))
		return zero, err
	}
	ended(attempts, "")
	if mode == neo4j.AccessModeWrite && db.AfterWrite != nil && ctx.Value(unannounced{}) == nil {
		db.AfterWrite()
	}
	return v.(T), nil
}

// failed maps the error of a transaction that did not commit: ETIMEOUT
// once ctx's deadline has passed (whether the driver gave up on ctx or
// Neo4j aborted the transaction at the timeout taken from ctx, the request
// ran out of time and the transaction was rolled back), else mapError's.
func failed(ctx context.Context, err error) error {
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return fmt.Errorf("%w: %w", timedOut(), mapError(err))
	}
	return mapError(err)
}

// observe tells every observer that a transaction of mode starts and
// returns the context to run it in and the function that reports its end.
func (db *DB) observe(ctx context.Context, mode string) (context.Context, func(attempts int, code string)) {
	switch len(db.observer) {
	case 0:
		return ctx, func(int, string) {}
	case 1:
		return db.observer[0].Transaction(ctx, mode)
	}
	ends := make([]func(int, string), len(db.observer))
	for i, o := range db.observer {
		ctx, ends[i] = o.Transaction(ctx, mode)
	}
	return ctx, func(attempts int, code string) {
		// Innermost first, as the contexts were derived.
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](attempts, code)
		}
	}
}

// txConfig returns the configuration of a transaction run for ctx: the
// configured timeout, or the time ctx has left when that is shorter, so
// that Neo4j itself aborts and rolls back work nobody waits for any more
// (the driver giving up on ctx alone would leave it running on the
// server). A ctx already past its deadline is ETIMEOUT before any
// transaction begins.
func (db *DB) txConfig(ctx context.Context) ([]func(*neo4j.TransactionConfig), error) {
	d, ok := ctx.Deadline()
	if !ok {
		return db.txConf, nil
	}
	left := time.Until(d)
	if left <= 0 {
		return nil, fmt.Errorf("%w: %w", timedOut(), context.DeadlineExceeded)
	}
	if db.txTimeout > 0 && db.txTimeout <= left {
		return db.txConf, nil
	}
	// Neo4j counts whole milliseconds and takes 0 for no timeout at all.
	return []func(*neo4j.TransactionConfig){neo4j.WithTxTimeout(max(left, time.Millisecond))}, nil
}

// commitUncertain reports whether a write transaction that failed with
// err after its work was done, while the driver committed it, may have
// committed nevertheless. Only an answer of the server to the COMMIT (or to
// the statements it flushed first) proves that nothing was written: a
// ClientError or TransientError is a refusal, and the driver retries only
// such refusals, so a TransactionExecutionLimit (retries used up) proves it
// too. A lost connection (the driver's "connection lost during commit"), a
// context that ended while the driver waited for the answer, a
// DatabaseError (the server failed inside the commit) or anything else
// leaves the outcome unknown.
func commitUncertain(err error) bool {
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) {
		return false
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		c := ne.Classification()
		return c != "ClientError" && c != "TransientError"
	}
	return true
}

func outcomeUnknown() error {
	return membrane.Errorf(membrane.EUNKNOWN, "the write's commit was interrupted (the database connection was lost or the request ran out of time): "+
		"it may or may not have been applied; a retry with the same idempotency key or record ids is safe")
}

func timedOut() error {
	return membrane.Errorf(membrane.ETIMEOUT, "the request timed out; the transaction it was running was rolled back")
}

// autocommit runs one statement in an auto-commit transaction
// (session.Run) and returns its rows. Statements with CALL { } IN
// TRANSACTIONS must run this way: they commit batch by batch themselves,
// which a managed transaction (ExecuteWrite) does not allow. The outer
// transaction lives as long as the statement, so its timeout is ctx's
// deadline (a job's run timeout) rather than the per-request tx_timeout.
// It is not retried: every statement run this way is idempotent, and the
// job that runs it tries again on its next tick.
func autocommit(ctx context.Context, db *DB, stmt string, params map[string]any) (rows []*neo4j.Record, err error) {
	ctx, ended := db.observe(ctx, "autocommit")
	defer func() { ended(1, membrane.ErrorCode(err)) }()
	s := db.session(ctx, neo4j.AccessModeWrite)
	defer s.Close(ctx)
	var conf []func(*neo4j.TransactionConfig)
	if deadline, ok := ctx.Deadline(); ok {
		conf = append(conf, neo4j.WithTxTimeout(max(time.Until(deadline), time.Millisecond)))
	}
	db.txCount.Add(1)
	res, err := s.Run(ctx, stmt, params, conf...)
	if err != nil {
		return nil, mapError(err)
	}
	rows, err = res.Collect(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return rows, nil
}

// single runs a statement expected to return at most one row; it returns
// nil and no error when there is none.
func single(ctx context.Context, tx runner, stmt string, params map[string]any) (*neo4j.Record, error) {
	return profiled(ctx, tx, stmt, params, func(res neo4j.ResultWithContext) (*neo4j.Record, error) {
		if res.Next(ctx) {
			rec := res.Record()
			return rec, res.Err()
		}
		return nil, res.Err()
	})
}

// collect runs a statement and returns all its rows.
func collect(ctx context.Context, tx runner, stmt string, params map[string]any) ([]*neo4j.Record, error) {
	return profiled(ctx, tx, stmt, params, func(res neo4j.ResultWithContext) ([]*neo4j.Record, error) {
		return res.Collect(ctx)
	})
}

// mapError turns driver and server errors into membrane errors. It is the
// one place that knows Neo4j's error codes; whatever it does not recognise
// stays an internal error whose text never reaches a client.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var me *membrane.Error
	if errors.As(err, &me) {
		return err
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		switch ne.Code {
		case "Neo.ClientError.Schema.ConstraintValidationFailed":
			return constraintError(ne)
		case "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
			"Neo.ClientError.Schema.IndexAlreadyExists",
			"Neo.ClientError.Schema.ConstraintAlreadyExists":
			// CREATE ... IF NOT EXISTS racing the same statement of another
			// process: the check passed in both, one commit lost.
			return fmt.Errorf("%w: %w", membrane.Errorf(membrane.ECONFLICT, "a concurrent schema change created it first"), err)
		case "Neo.ClientError.Transaction.TransactionTimedOut",
			"Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration":
			return fmt.Errorf("%w: %w", membrane.Errorf(membrane.EUNAVAILABLE, "the database timed out"), err)
		}
		if ne.Classification() == "TransientError" {
			return fmt.Errorf("%w: %w", membrane.Errorf(membrane.EUNAVAILABLE, "the database is busy; retry"), err)
		}
		return fmt.Errorf("neo4j: %w", err)
	}
	// The driver gave up retrying a retryable failure (a refused or dropped
	// connection, a deadlock, a busy database): transient by definition. It
	// does not wrap its attempts' errors, so it is matched on its own.
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) {
		return fmt.Errorf("%w: %w", membrane.Errorf(membrane.EUNAVAILABLE, "the database is unavailable or busy; retry"), err)
	}
	var ce *neo4j.ConnectivityError
	if errors.As(err, &ce) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", membrane.Errorf(membrane.EUNAVAILABLE, "the database is unavailable"), err)
	}
	var uce *neo4j.UsageError
	if errors.As(err, &uce) {
		return fmt.Errorf("neo4j usage: %w", err)
	}
	return fmt.Errorf("neo4j: %w", err)
}

// idTaken is the answer to a create whose id a record has or had: the same
// for a record the caller sees, one it cannot see and a deleted one
// (membrane.IDTaken).
// recordIDConstraint matches the start of the message of a uniqueness
// violation on a record id or a deleted record's id: the ids a client may
// choose. The label and property come before the value, which the client
// chose, so a value cannot fake them.
var recordIDConstraint = regexp.MustCompile("^Node\\(\\d+\\) already exists with label `(Memory|DeletedRecordId)` and property `id` ")

// constraintError maps a uniqueness violation. On a record id (or a
// deleted one) it is a taken id, answered alike whoever holds it (see
// membrane.IDTaken). Every other unique node (job runs, plan steps,
// idempotency keys, lock buckets) has a key the server chose or derived:
// a concurrent request wrote the same one first, a CONFLICT to retry, which
// the idempotency replay relies on; it must not tell a client to choose
// another id it never chose.
func constraintError(ne *neo4j.Neo4jError) error {
	if recordIDConstraint.MatchString(ne.Msg) {
		return idTaken()
	}
	return fmt.Errorf("%w: %w", membrane.Errorf(membrane.ECONFLICT, "a concurrent request wrote the same item first; retry"), ne)
}

func idTaken() error {
	return &membrane.Error{Code: membrane.ECONFLICT, Message: membrane.IDTaken}
}

// checkReused returns idTaken when a statement that created records
// (create_records, apply_change, capture_apply) counted ids in its reused
// column that deleted records had; the work function then fails and its
// transaction is rolled back.
func checkReused(row *neo4j.Record) error {
	if row == nil {
		return nil
	}
	if n, _, _ := neo4j.GetRecordValue[int64](row, "reused"); n > 0 {
		return idTaken()
	}
	return nil
}

// RunReadOnly runs a read-only statement and discards its rows: for ad-hoc
// statements such as the analyst queries, which take their text from
// cypher/analyst, never from a request.
func (db *DB) RunReadOnly(ctx context.Context, stmt string, params map[string]any) error {
	_, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := collect(ctx, tx, stmt, params)
		return struct{}{}, err
	})
	return err
}
