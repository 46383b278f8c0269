package main_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestServerConnectionTimeouts (issue 15): the server (in-process),
// configured by its environment, closes a connection whose body trickles in past
// read_timeout (408 first) and a kept-alive connection idle past
// idle_timeout; before, both were held for as long as the client liked.
func TestServerConnectionTimeouts(t *testing.T) {
	scope := neo4jtest.Scope(t)
	p := start(t, append(jobsOff, "MEMBRANE_JOBS_SCOPES="+scope, "MEMBRANE_READ_TIMEOUT=300ms", "MEMBRANE_IDLE_TIMEOUT=300ms")...)
	dial := func(t *testing.T) (net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		// A generous protocol bound, far beyond both timeouts.
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		return conn, bufio.NewReader(conn)
	}
	// closed reports whether the server closed conn: EOF, or a reset.
	closed := func(br *bufio.Reader) error {
		_, err := br.ReadByte()
		var ne net.Error
		if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
			return fmt.Errorf("connection still open: %v", err)
		}
		return nil
	}
	tests := []struct {
		name string
		run  func(t *testing.T, conn net.Conn, br *bufio.Reader)
	}{
		{"a body that stalls is cut", func(t *testing.T, conn net.Conn, br *bufio.Reader) {
			body := `{"query": "{ __typename }"}`
			fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: m\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body)+1, body)
			// The last byte never comes.
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(raw), `"code":"TIMEOUT"`) {
				t.Fatalf("status %d %s, want 408 TIMEOUT", resp.StatusCode, raw)
			}
			if err := closed(br); err != nil {
				t.Fatal(err)
			}
		}},
		{"an idle kept-alive connection is closed", func(t *testing.T, conn net.Conn, br *bufio.Reader) {
			fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: m\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Close {
				t.Fatalf("status %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
			}
			if err := closed(br); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, br := dial(t)
			tt.run(t, conn, br)
		})
	}
	p.Stop(t)
}
