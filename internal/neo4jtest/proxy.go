package neo4jtest

import (
	"cmp"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// Bolt request signatures (the second byte of a message, after its struct
// marker) that a BoltProxy can be armed with.
const (
	SigRun    byte = 0x10
	SigBegin  byte = 0x11
	SigCommit byte = 0x12
)

const (
	sigGoodbye = 0x02
	sigSuccess = 0x70
	sigRecord  = 0x71
	sigIgnored = 0x7E
	sigFailure = 0x7F
)

// BoltProxy forwards Bolt connections on loopback to the test Neo4j, so
// that a test can lose a connection at a chosen point of the protocol, as
// a network failure or a Neo4j crash would. Armed with a request signature
// (DropAnswerTo), it forwards the next such request to Neo4j, swallows
// Neo4j's answer to it and closes that connection both ways: armed with
// SigCommit, the transaction commits in Neo4j and the driver never learns
// it.
type BoltProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	armed   byte          // the signature to drop the answer to; 0: none
	dropped chan struct{} // receives once per swallowed answer
	sent    map[byte]int  // requests forwarded, by signature
}

// NewBoltProxy starts a proxy to NEO4J_URI (a bolt:// URI to one server;
// the test is skipped for another scheme), stopped when the test ends.
func NewBoltProxy(tb testing.TB) *BoltProxy {
	tb.Helper()
	DB(tb) // NEO4J_URI is set and the schema applied
	u, err := url.Parse(os.Getenv("NEO4J_URI"))
	if err != nil || u.Host == "" {
		tb.Fatalf("NEO4J_URI %q: %v", os.Getenv("NEO4J_URI"), err)
	}
	if u.Scheme != "bolt" {
		tb.Skipf("the proxy speaks plain bolt:// to one server, not %s://", u.Scheme)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &BoltProxy{ln: ln, target: u.Host, dropped: make(chan struct{}, 1), sent: map[byte]int{}}
	var wg sync.WaitGroup
	tb.Cleanup(func() { _ = ln.Close(); wg.Wait() })
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

// Open returns a store of its own (closed when the test ends) that reaches
// Neo4j through the proxy.
func (p *BoltProxy) Open(tb testing.TB) *neo4j.DB {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sealer, err := membrane.NewSealer(membrane.SensitivityHigh, []membrane.SealKey{TestSealKey}, TestSealKey.ID)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := neo4j.Open(ctx, neo4j.Config{URI: "bolt://" + p.ln.Addr().String(), User: os.Getenv("NEO4J_USER"),
		Password: os.Getenv("NEO4J_PASSWORD"), Database: cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j"),
		MaxPoolSize: 4, TxTimeout: time.Minute, Sealer: sealer})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close(context.Background()) })
	return db
}

// DropAnswerTo arms the proxy: Neo4j's answer to the next request with
// signature sig, on any connection, is swallowed and its connection
// closed.
func (p *BoltProxy) DropAnswerTo(sig byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = sig
}

// Sent is the number of requests with signature sig forwarded so far, on
// every connection.
func (p *BoltProxy) Sent(sig byte) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[sig]
}

// Wait fails the test unless an armed answer has been swallowed (since the
// last Wait).
func (p *BoltProxy) Wait(tb testing.TB) {
	tb.Helper()
	select {
	case <-p.dropped:
	case <-time.After(30 * time.Second):
		tb.Fatal("the proxy never saw the armed request")
	}
}

// serve forwards one connection. The client's side counts requests and
// notes the number of the armed one before its last chunk is forwarded (so
// before the server can answer it); the server's side counts summaries,
// which Bolt sends one per request, in order.
func (p *BoltProxy) serve(client net.Conn) {
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
			p.sent[msg[1]]++
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
	m := version[2] == 0x01 && version[3] == 0xFF
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
			select {
			case p.dropped <- struct{}{}:
			default: // one not waited for yet: Wait needs only one
			}
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
