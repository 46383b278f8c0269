package http

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/membrane/membrane/internal/membrane"
)

// websocketTransport is gqlgen's WebSocket transport held to the
// graphql-transport-ws protocol and to Membrane's error shape, which gqlgen
// leaves to its users:
//   - a second connection_init closes the socket with 4429 ("Too many
//     initialisation requests"), a subscribe before connection_init with
//     4401 ("Unauthorized"), as the protocol specifies (gqlgen closes both
//     with 1002);
//   - a request that cannot be upgraded gets a GraphQL error with
//     extensions.code and a 4xx status, not gqlgen's text "unable to
//     upgrade" after the WebSocket library's own.
//
// It wraps the accepted connection, whose messages it reads first, instead
// of owning the message loop, which gqlgen keeps correct in every other way.
type websocketTransport struct{ transport.Websocket }

var _ graphql.Transport = websocketTransport{}

// newWebsocketTransport returns t with its Implementation wrapped.
func newWebsocketTransport(t transport.Websocket) websocketTransport {
	inner := t.Implementation
	if inner == nil {
		inner = transport.CoderWebsocketImplementation{}
	}
	t.Implementation = wsImplementation{inner}
	return websocketTransport{t}
}

// Do upgrades the request and serves its socket. Once a failed upgrade is
// answered, gqlgen's own answer is dropped.
func (t websocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Websocket.Do(&sealWriter{ResponseWriter: w}, r, exec)
}

// wsImplementation accepts sockets with the inner implementation and holds
// them to the protocol (protocolConn).
type wsImplementation struct {
	inner transport.WebsocketImplementation
}

// Accept upgrades the request. When it cannot, the WebSocket library's
// plain-text answer is replaced by a coded GraphQL error of the same 4xx
// status (BAD_USER_INPUT, FORBIDDEN for an origin that may not connect).
func (i wsImplementation) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	fw := &failureWriter{ResponseWriter: w}
	conn, err := i.inner.Accept(fw, r, o)
	if err != nil {
		status, code, msg := http.StatusBadRequest, membrane.EINVALID, "the request is not a valid WebSocket upgrade"
		switch {
		case fw.status == http.StatusForbidden:
			status, code, msg = fw.status, membrane.EFORBIDDEN, "WebSocket connections from this origin are not allowed"
		case fw.status >= 400 && fw.status < 500:
			status = fw.status
		}
		writeError(w, status, code, msg)
		if sw, ok := w.(*sealWriter); ok {
			sw.seal()
		}
		return nil, err
	}
	charges, _ := r.Context().Value(perOperationKey{}).(*socketCharges)
	return &protocolConn{WebsocketConn: conn, charges: charges}, nil
}

// failureWriter keeps the status of an error answer to itself, and drops
// its body; 101 Switching Protocols and the hijack pass.
type failureWriter struct {
	http.ResponseWriter
	status int
}

func (f *failureWriter) WriteHeader(status int) {
	if status >= 400 {
		if f.status == 0 {
			f.status = status
		}
		return
	}
	f.ResponseWriter.WriteHeader(status)
}

func (f *failureWriter) Write(b []byte) (int, error) {
	if f.status != 0 {
		return len(b), nil
	}
	return f.ResponseWriter.Write(b)
}

// Unwrap gives the WebSocket library the writer to hijack.
func (f *failureWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// sealWriter drops every write once sealed.
type sealWriter struct {
	http.ResponseWriter
	mu     sync.Mutex
	sealed bool
}

func (s *sealWriter) seal() {
	s.mu.Lock()
	s.sealed = true
	s.mu.Unlock()
}

func (s *sealWriter) isSealed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sealed
}

func (s *sealWriter) WriteHeader(status int) {
	if !s.isSealed() {
		s.ResponseWriter.WriteHeader(status)
	}
}

func (s *sealWriter) Write(b []byte) (int, error) {
	if s.isSealed() {
		return len(b), nil
	}
	return s.ResponseWriter.Write(b)
}

// Hijack hands the connection to the WebSocket.
func (s *sealWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(s.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *sealWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// graphql-transport-ws close codes beyond those of authenticateInit.
const (
	// closeTooManyInits is the protocol's code for a second
	// connection_init (the same number as closeRateLimited, which closes a
	// socket whose client keeps sending operations refused for its rate).
	closeTooManyInits = 4429
	subprotocolGTWS   = "graphql-transport-ws"
)

// protocolConn reads each message of a graphql-transport-ws socket before
// gqlgen does, to close the socket as the protocol says when a client
// initialises twice or subscribes before initialising. (A subscribe sent
// before connection_ack but after connection_init is fine: the server
// reads it after acknowledging.)
type protocolConn struct {
	transport.WebsocketConn
	// charges are the socket's rate-limit refusals (nil without limits).
	charges *socketCharges

	mu     sync.Mutex
	inited bool
}

// The optional interfaces gqlgen looks for on a connection pass through:
// without SetReadLimit the WebSocket library's 32 KiB default would end any
// socket that sends a larger operation (a createRecord with its payload),
// and without SetReadDeadline a missing pong could not end a dead socket.
var (
	_ transport.WebsocketReadLimiter   = (*protocolConn)(nil)
	_ transport.WebsocketReadDeadliner = (*protocolConn)(nil)
)

// SetReadLimit bounds a message read from the client.
func (c *protocolConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

// SetReadDeadline bounds the wait for the client's next message.
func (c *protocolConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// NextReader returns the next message, or ErrWebsocketClosed once it
// closed the socket for a breach of the protocol (gqlgen then ends the
// connection without another close code).
func (c *protocolConn) NextReader() (int, io.Reader, error) {
	typ, r, err := c.WebsocketConn.NextReader()
	gtws := c.Subprotocol() == subprotocolGTWS
	if err != nil || (!gtws && c.charges == nil) {
		return typ, r, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return typ, nil, err
	}
	// What does not decode is gqlgen's to refuse.
	var m struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !gtws {
		// graphql-ws: only the flood rule; "start" starts an operation.
		if m.Type == "start" && c.charges.abusive() {
			return typ, nil, c.closeFlood()
		}
		return typ, bytes.NewReader(data), nil
	}
	switch m.Type {
	case "connection_init":
		if c.inited {
			_ = c.WriteClose(closeTooManyInits, "Too many initialisation requests")
			return typ, nil, transport.ErrWebsocketClosed
		}
		c.inited = true
	case "subscribe":
		if !c.inited {
			_ = c.WriteClose(closeUnauthorized, "Unauthorized")
			return typ, nil, transport.ErrWebsocketClosed
		}
		if c.charges.abusive() {
			return typ, nil, c.closeFlood()
		}
	}
	return typ, bytes.NewReader(data), nil
}

// closeFlood closes the socket of a client that goes on sending operations
// refused for its rate, and returns the error that ends gqlgen's loop.
func (c *protocolConn) closeFlood() error {
	_ = c.WriteClose(closeRateLimited, "Too many requests: operations refused for the rate limit were sent again")
	return transport.ErrWebsocketClosed
}
