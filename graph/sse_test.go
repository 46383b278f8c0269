package graph_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// afterReturn watches a handler's ResponseWriters: it counts the writes
// and flushes that reach one after its handler returned (the SSE crash of
// issue 15: net/http has released the connection's buffer by then), and
// tells when a response has been handed more than bigBytes.
type afterReturn struct {
	bigBytes int64
	late     atomic.Int64
	big      chan struct{} // one per response past bigBytes
	returned chan struct{} // one per handler return
}

func (a *afterReturn) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := &guardWriter{ResponseWriter: w, a: a}
		next.ServeHTTP(gw, r)
		gw.done.Store(true)
		a.returned <- struct{}{}
	})
}

type guardWriter struct {
	http.ResponseWriter
	a       *afterReturn
	done    atomic.Bool
	written atomic.Int64
	bigOnce sync.Once
}

func (g *guardWriter) Write(b []byte) (int, error) {
	if g.done.Load() {
		g.a.late.Add(1)
	}
	if g.written.Add(int64(len(b))) > g.a.bigBytes {
		g.bigOnce.Do(func() { g.a.big <- struct{}{} })
	}
	// Passed on even late, as a real connection would get it: the test
	// reproduces the crash, not only its cause.
	return g.ResponseWriter.Write(b)
}

func (g *guardWriter) Flush() {
	if g.done.Load() {
		g.a.late.Add(1)
	}
	_ = http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *guardWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// TestSSEClientHangsUpMidStream reproduces issue 15's crash: SSE
// subscriptions stream large events to clients that read nothing, while
// keep-alives tick every millisecond, and the clients hang up mid-event.
// gqlgen's SSE transport let its keep-alive goroutine write after the
// handler returned, and the process died of a nil-pointer panic in
// bufio.(*Writer).Flush. Nothing may touch a response after its handler
// returned, and the server must go on serving. Run it with -race and a
// high -count.
func TestSSEClientHangsUpMidStream(t *testing.T) {
	const (
		records = 20
		rounds  = 4
		streams = 5
		size    = 500 << 10
	)
	setup, _ := withFeed(t)
	opts := graph.DefaultHandlerOptions()
	opts.KeepAliveInterval = time.Millisecond
	c := newClientFull(t, nil, opts)
	// Buffered for every response of the test, so that no handler waits
	// on the test.
	guard := &afterReturn{bigBytes: 1 << 20, big: make(chan struct{}, 2*rounds*streams), returned: make(chan struct{}, 2*rounds*streams)}
	c.wrap = guard.wrap
	c.url = c.serve(setup)
	base := c.url

	scope := neo4jtest.Scope(t)
	from := changeCursor(t, c)
	// Strings are bounded (membrane.MaxStringBytes), payloads much less.
	big := []any{}
	for range size / 100_000 {
		big = append(big, strings.Repeat("x", 100_000))
	}
	for i := range records {
		p := fact(fmt.Sprint("big-", i))
		p["semantic"].(map[string]any)["object"] = big
		c.create(scope, "SEMANTIC", p, nil)
	}
	body, _ := json.Marshal(map[string]any{"query": `subscription($after: String, $f: ChangeFilter) {
	  recordChanged(after: $after, filter: $f) { cursor record { payload { ... on SemanticPayload { subject object } } } } }`,
		"variables": map[string]any{"after": from, "f": map[string]any{"scopes": []any{scope}}}})
	u, _ := url.Parse(base)
	request := fmt.Sprintf("POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"+
		"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", u.Host, c.key, len(body), body)

	deadline := time.After(2 * time.Minute)
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	for round := range rounds {
		conns := make([]*net.TCPConn, streams)
		for i := range conns {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			tc := conn.(*net.TCPConn)
			// A client that reads nothing: its small window fills at once
			// and the server's writes block.
			_ = tc.SetReadBuffer(1024)
			if _, err := tc.Write([]byte(request)); err != nil {
				t.Fatal(err)
			}
			conns[i] = tc
		}
		for range streams {
			wait(guard.big, fmt.Sprintf("round %d: the streams to be mid-event", round))
		}
		for _, tc := range conns {
			_ = tc.SetLinger(0) // hang up hard: a reset, as a killed client
			_ = tc.Close()
		}
		for range streams {
			wait(guard.returned, fmt.Sprintf("round %d: the handlers to return", round))
		}
	}
	// The server still serves: a query and a fresh stream's first bytes.
	if n := c.count(scope); n != records {
		t.Fatalf("count = %d, want %d", n, records)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("a new stream after the hang-ups: %q, %v", status, err)
	}
	if n := guard.late.Load(); n > 0 {
		t.Fatalf("%d writes or flushes reached a response after its handler returned", n)
	}
}
