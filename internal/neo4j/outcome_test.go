package neo4j_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
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
// that swallows Neo4j's answer to one message and then closes the
// connection, as a network failure or a Neo4j crash right after the commit
// would. A write whose COMMIT answer is lost did commit: it is
// OUTCOME_UNKNOWN, never UNAVAILABLE (which promises nothing was written),
// and its retry (the same request: the same implied idempotency key)
// answers with the record without writing it twice. A read is UNAVAILABLE, and a write whose
// connection is lost before its COMMIT is retried by the driver and
// written once.
func TestLostCommitAnswer(t *testing.T) {
	neo4jtest.DB(t) // the schema is applied
	p := newBoltProxy(t)
	db := p.open(t)
	shared := neo4jtest.DB(t)

	t.Run("write: the commit's answer is lost", func(t *testing.T) {
		scope := neo4jtest.Scope(t)
		in := ingested(t, scope, "lost answer")
		// No key: the one the record's chosen id implies, as a request
		// gets it (graph.idempotency).
		idem := membrane.ImpliedIdempotency("test", "createRecords", "lost answer", []string{in.Record.ID})
		p.arm(sigCommit)
		_, err := db.CreateRecords(sysCtx(), idem, []*membrane.Ingested{in})
		p.wait(t)
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
	t.Run("read: the commit's answer is lost", func(t *testing.T) {
		rec := create(t, shared, t0, fact(neo4jtest.Scope(t), "read", 0.5, nil))[0]
		p.arm(sigCommit)
		_, err := db.FindRecordByID(sysCtx(), rec.ID)
		p.wait(t)
		if code := membrane.ErrorCode(err); code != membrane.EUNAVAILABLE {
			t.Fatalf("code = %s (%v), want %s", code, err, membrane.EUNAVAILABLE)
		}
	})
	t.Run("write: the statement's answer is lost before the commit", func(t *testing.T) {
		scope := neo4jtest.Scope(t)
		p.arm(sigRun)
		_, err := db.CreateRecords(sysCtx(), nil, []*membrane.Ingested{ingested(t, scope, "retried")})
		p.wait(t)
		if err != nil {
			t.Fatalf("the driver's retry on a new connection failed: %v", err)
		}
		if n := len(inScope(t, shared, scope)); n != 1 {
			t.Fatalf("%d records, want 1", n)
		}
	})
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

// Bolt message signatures (the second byte of a message, after its struct
// marker).
const (
	sigRun     = 0x10
	sigCommit  = 0x12
	sigGoodbye = 0x02
	sigSuccess = 0x70
	sigRecord  = 0x71
	sigIgnored = 0x7E
	sigFailure = 0x7F
)

// boltProxy forwards Bolt connections to the test Neo4j. Armed with a
// request signature, it swallows the server's answer (summary) to the next
// request of that signature and closes that connection, both ways.
type boltProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	armed   byte          // the signature to drop the answer to; 0: none
	dropped chan struct{} // receives once per swallowed answer
}

func newBoltProxy(t *testing.T) *boltProxy {
	t.Helper()
	u, err := url.Parse(os.Getenv("NEO4J_URI"))
	if err != nil || u.Host == "" {
		t.Fatalf("NEO4J_URI %q: %v", os.Getenv("NEO4J_URI"), err)
	}
	if u.Scheme != "bolt" {
		t.Skipf("the proxy speaks plain bolt:// to one server, not %s://", u.Scheme)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &boltProxy{ln: ln, target: u.Host, dropped: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); p.serve(c) }()
		}
	}()
	return p
}

// open returns a store of its own that reaches Neo4j through the proxy.
func (p *boltProxy) open(t *testing.T) *neo4j.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := neo4j.Open(ctx, neo4j.Config{URI: "bolt://" + p.ln.Addr().String(), User: os.Getenv("NEO4J_USER"),
		Password: os.Getenv("NEO4J_PASSWORD"), Database: cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j"), MaxPoolSize: 4, TxTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return db
}

func (p *boltProxy) arm(sig byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = sig
}

// wait fails the test unless the armed answer was swallowed.
func (p *boltProxy) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.dropped:
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy never saw the armed request")
	}
}

// serve forwards one connection. The client's side counts requests and
// notes the number of the armed one before its last chunk is forwarded (so
// before the server can answer it); the server's side counts summaries,
// which Bolt sends one per request, in order.
func (p *boltProxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	var (
		mu   sync.Mutex
		drop = -1 // the number of the request whose answer is swallowed
		once sync.Once
	)
	closeBoth := func() { once.Do(func() { _ = client.Close(); _ = server.Close() }) }
	defer closeBoth()
	manifest := make(chan bool, 1) // whether the server chose manifest negotiation
	go func() {
		defer closeBoth()
		if !copyN(server, client, 20) { // magic and version proposals
			return
		}
		if m, ok := <-manifest; !ok || (m && !(copyN(server, client, 4) && copyVarint(server, client))) {
			return // the chosen version and capabilities
		}
		requests := 0
		_ = messages(client, server, func(msg []byte) bool {
			if len(msg) < 2 || msg[1] == sigGoodbye {
				return true
			}
			requests++
			p.mu.Lock()
			if p.armed != 0 && msg[1] == p.armed {
				p.armed = 0
				mu.Lock()
				drop = requests
				mu.Unlock()
			}
			p.mu.Unlock()
			return true
		})
	}()
	version := make([]byte, 4)
	if _, err := io.ReadFull(server, version); err != nil {
		close(manifest)
		return
	}
	// Bolt 5.7's manifest: the server lists its versions and capabilities,
	// and the client answers with its choice.
	m := version[3] == 0xFF && version[2] == 0x01
	manifest <- m
	if _, err := client.Write(version); err != nil {
		return
	}
	if m {
		n, ok := copyVarintValue(client, server)
		if !ok || !copyN(client, server, 4*int64(n)) || !copyVarint(client, server) {
			return
		}
	}
	summaries := 0
	_ = messages(server, client, func(msg []byte) bool {
		if len(msg) < 2 || msg[1] == sigRecord {
			return true
		}
		if msg[1] == sigSuccess || msg[1] == sigFailure || msg[1] == sigIgnored {
			summaries++
		}
		mu.Lock()
		hit := summaries == drop
		mu.Unlock()
		if hit {
			closeBoth()
			p.dropped <- struct{}{}
			return false
		}
		return true
	})
}

// copyVarintValue copies one Bolt handshake varint (7 bits a byte, low
// first) and returns its value.
func copyVarintValue(dst io.Writer, src io.Reader) (uint64, bool) {
	var v uint64
	b := make([]byte, 1)
	for shift := 0; shift < 64; shift += 7 {
		if _, err := io.ReadFull(src, b); err != nil {
			return 0, false
		}
		if _, err := dst.Write(b); err != nil {
			return 0, false
		}
		v |= uint64(b[0]&0x7F) << shift
		if b[0]&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

func copyVarint(dst io.Writer, src io.Reader) bool {
	_, ok := copyVarintValue(dst, src)
	return ok
}

func copyN(dst io.Writer, src io.Reader, n int64) bool {
	_, err := io.CopyN(dst, src, n)
	return err == nil
}

// messages reads chunked Bolt messages from src. It forwards every chunk to
// dst as read, except that a message's terminating empty chunk is
// forwarded only after seen(message) returned true; false stops. An empty
// chunk that ends no message (a NOOP keep-alive) is forwarded as is.
func messages(src io.Reader, dst io.Writer, seen func(msg []byte) bool) error {
	var msg []byte
	head := make([]byte, 2)
	for {
		if _, err := io.ReadFull(src, head); err != nil {
			return err
		}
		n := binary.BigEndian.Uint16(head)
		if n == 0 {
			if len(msg) > 0 && !seen(msg) {
				return nil
			}
			msg = msg[:0]
			if _, err := dst.Write(head); err != nil {
				return err
			}
			continue
		}
		chunk := make([]byte, 2+int(n))
		copy(chunk, head)
		if _, err := io.ReadFull(src, chunk[2:]); err != nil {
			return err
		}
		msg = append(msg, chunk[2:]...)
		if _, err := dst.Write(chunk); err != nil {
			return err
		}
	}
}
