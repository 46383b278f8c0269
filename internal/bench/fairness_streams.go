package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// wsMsg is a graphql-transport-ws message.
type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// floodOps is how many operations a flooding socket sends at once.
const floodOps = 2000

// wsFlood opens a graphql-transport-ws socket, sends floodOps operations
// as fast as it can and reads the answers until they are all in or the
// server closes the socket. Its answer is how the socket ended.
func (h *Hostile) wsFlood(ctx context.Context) string {
	u, err := url.Parse(h.URL)
	if err != nil {
		return "unsendable"
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	c, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return ""
		case resp != nil:
			return fmt.Sprint("upgrade ", resp.StatusCode)
		}
		return "transport"
	}
	defer c.CloseNow()
	c.SetReadLimit(16 << 20)
	auth := map[string]any{}
	if h.Key != "" {
		auth["Authorization"] = "Bearer " + h.Key
	}
	init, _ := json.Marshal(auth)
	if err := wsjson.Write(ctx, c, wsMsg{Type: "connection_init", Payload: init}); err != nil {
		return ended(ctx, err, "init")
	}
	for {
		var m wsMsg
		if err := wsjson.Read(ctx, c, &m); err != nil {
			return ended(ctx, err, "init")
		}
		if m.Type == "connection_ack" {
			break
		}
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		op, _ := json.Marshal(map[string]any{"query": "{ changeCursor }"})
		for i := range floodOps {
			if wsjson.Write(ctx, c, wsMsg{ID: strconv.Itoa(i), Type: "subscribe", Payload: op}) != nil {
				return
			}
		}
	}()
	done := 0
	for done < floodOps {
		var m wsMsg
		if err := wsjson.Read(ctx, c, &m); err != nil {
			<-sent
			return ended(ctx, err, "flood")
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(ctx, c, wsMsg{Type: "pong"})
		case "complete", "error":
			done++
		}
	}
	<-sent
	return "ws all answered"
}

// ended names how a socket ended: the server's close code, or the phase's
// end (a socket the server still served then was answered all along).
func ended(ctx context.Context, err error, during string) string {
	if code := websocket.CloseStatus(err); code != -1 {
		return fmt.Sprintf("ws closed %d", code)
	}
	if ctx.Err() != nil {
		return "ws open at the phase's end"
	}
	return "ws broken during " + during
}

// sseHangup opens an SSE stream of the fixture's changes from before it
// was written, on a socket with a small receive buffer, reads nothing past
// the status line for hold, and hangs up: the server's writes block on it
// meanwhile. Its answer is the stream's status.
func (h *Hostile) sseHangup(ctx context.Context, hold time.Duration) string {
	body, _ := json.Marshal(map[string]any{"query": `subscription($s: [String!], $after: String) { recordChanged(filter: {scopes: $s}, after: $after) {
		cursor recordId action record { id summary } } }`, "variables": map[string]any{"s": []string{h.Scope}, "after": h.Cursor}})
	conn, hangUp, outcome := h.dialPost(ctx, SmallBufferDialer, "Accept: text/event-stream\r\n", len(body), body)
	if conn == nil {
		return outcome
	}
	defer hangUp()
	line, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	var status int
	if _, serr := fmt.Sscanf(line, "HTTP/1.1 %d", &status); err != nil || serr != nil {
		if ctx.Err() != nil {
			return ""
		}
		return "closed"
	}
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return fmt.Sprint(status)
}

// SmallBufferDialer asks for a 4 KiB receive buffer, so that a client that
// reads nothing blocks the server's writes after little data.
var SmallBufferDialer = &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	}); err != nil {
		return err
	}
	return serr
}}
