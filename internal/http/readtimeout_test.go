package http_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestSlowBodyIsCut (issue 15): a client that sends its headers and then
// trickles its body is answered 408 TIMEOUT once the read timeout has
// passed, long before it would have finished, and its connection is
// closed; before, the server read for as long as the client kept sending.
func TestSlowBodyIsCut(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	opts := membranehttp.DefaultHandlerOptions()
	opts.ReadTimeout = readTimeout
	c := gqltest.NewOpts(t, opts)
	// The same handler served as internal/app serves it: observed, through
	// the recorder that wraps every response writer.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := gqltest.NewWiring(c.DB, log)
	w.Stores = membrane.Stores{Records: c.DB}
	r := w.Resolver()
	observed := httptest.NewServer(membranehttp.Observe(membranehttp.NewHandler(r, c.DB, membrane.NewKeyring(c.Ring), log, opts), membranehttp.Observability{Log: log}))
	t.Cleanup(observed.Close)
	body := `{"query": "{ __typename }"}` + strings.Repeat(" ", 40)
	length := fmt.Sprintf("Content-Length: %d\r\n", len(body))
	oneByte := func(b byte) string { return string(b) }
	tests := []struct {
		name, url, key string
		headers        string
		// chunk frames one byte of the body as the transfer encoding
		// wants it.
		chunk func(b byte) string
		// status and code answer the request.
		status int
		code   string
	}{
		{"announced length", c.URL, c.Key, length, oneByte, http.StatusRequestTimeout, "TIMEOUT"},
		{"chunked", c.URL, c.Key, "Transfer-Encoding: chunked\r\n", func(b byte) string { return fmt.Sprintf("1\r\n%c\r\n", b) },
			http.StatusRequestTimeout, "TIMEOUT"},
		{"observed", observed.URL, c.Key, length, oneByte, http.StatusRequestTimeout, "TIMEOUT"},
		// Answered before its body is read, the rest of which net/http
		// would read afterwards, to reuse the connection.
		{"refused before the body is read", c.URL, "wrong", length, oneByte, http.StatusUnauthorized, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(tt.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Generous protocol bound: the client would take 6.7 s to
			// send the whole body.
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: membrane\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n%s\r\n",
				tt.key, tt.headers); err != nil {
				t.Fatal(err)
			}
			answered := make(chan struct{})
			sent := make(chan int, 1)
			go func() { // one byte every 100 ms until answered
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				n := 0
				defer func() { sent <- n }()
				for ; n < len(body); n++ {
					select {
					case <-answered:
						return
					case <-tick.C:
					}
					if _, err := io.WriteString(conn, tt.chunk(body[n])); err != nil {
						return
					}
				}
				if strings.Contains(tt.headers, "chunked") {
					_, _ = io.WriteString(conn, "0\r\n\r\n")
				}
			}()
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				close(answered)
				t.Fatalf("no response: %v", err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out gqltest.Response
			if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != tt.status ||
				len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != tt.code {
				t.Fatalf("status %d body %s, want %d %s", resp.StatusCode, raw, tt.status, tt.code)
			}
			// The server closes the connection (EOF, or a reset when the
			// client's next byte met the closed socket) before the client
			// has sent its whole body.
			var ne net.Error
			if _, err := br.ReadByte(); err == nil || (errors.As(err, &ne) && ne.Timeout()) {
				t.Fatalf("connection still open after the answer: %v", err)
			}
			close(answered)
			if n := <-sent; n >= len(body) {
				t.Fatalf("the whole body (%d bytes) was read before the connection closed", n)
			}
		})
	}
}

// TestReadTimeoutSparesLongRequests: the read timeout bounds the body
// alone: an SSE subscription stays open and delivers long after it (the
// deadline is cleared once the body is read; a WebSocket upgrade has no
// body and never gets one), and the client's kept-alive connection serves
// the writes in between.
func TestReadTimeoutSparesLongRequests(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	setup, _ := gqltest.WithFeed(t)
	opts := membranehttp.DefaultHandlerOptions()
	opts.ReadTimeout = readTimeout
	c := gqltest.NewFull(t, setup, opts)
	scope := neo4jtest.Scope(t)
	s := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, map[string]any{"after": c.ChangeCursor(), "f": map[string]any{"scopes": []any{scope}}})
	for i := range 2 {
		// The scenario, not synchronisation: the stream stays idle for
		// longer than the read timeout.
		<-time.After(3 * readTimeout)
		id := c.Create(scope, "SEMANTIC", gqltest.Fact(fmt.Sprint("r", i)), nil)
		if e := gqltest.DecodeChange(t, s.Next()); e.RecordID != id {
			t.Fatalf("event for %s, want %s", e.RecordID, id)
		}
	}
}
