package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// Defaults of the server-sent events transport.
const (
	// DefaultKeepAliveInterval is how often an idle subscription stream
	// (SSE or WebSocket) gets a keep-alive, so that proxies do not cut it.
	DefaultKeepAliveInterval = 15 * time.Second
	// sseWriteTimeout bounds one write to an SSE client: a client that
	// reads nothing for this long is dropped, and its subscription ends,
	// instead of holding the stream (and its Neo4j reads) for ever.
	sseWriteTimeout = 30 * time.Second
)

// sseTransport serves GraphQL operations, subscriptions above all, as
// server-sent events, in the wire format of gqlgen's SSE transport: ":" first,
// then "event: next" with each response as data, ": ping" keep-alives while
// idle, and "event: complete" at the end.
//
// It is Membrane's own because gqlgen's keep-alive goroutine outlives the
// handler: a ping due as the stream ends wrote to the connection's released
// buffer, a nil-pointer panic that ended the process (issue 15). Here every
// write goes through one stream under one mutex; the keep-alive goroutine is
// stopped and waited for before Do returns; and once a write failed (the
// client went away or stopped reading) or Do returned, writes are dropped,
// never reaching the ResponseWriter.
type sseTransport struct {
	// keepAlive is the interval of keep-alives (0: none).
	keepAlive time.Duration
}

var _ graphql.Transport = sseTransport{}

// Supports takes POST requests of JSON that accept text/event-stream.
func (sseTransport) Supports(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == "application/json"
}

// Do runs the request's operation and streams its responses. A body that
// is not a GraphQL request in JSON gets a coded 400, and is never logged
// (it may hold record payloads).
func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// A panic here (outside a resolver, which gqlgen recovers) is
	// reported and ends this stream only. Without this, gqlgen's own
	// recover would answer it with a JSON 500 body written after the
	// stream's events. Registered first, it runs after the stream ended,
	// so nothing more reaches a stream that started; one that did not gets
	// a coded 500.
	var s *sseStream
	defer func() {
		if p := recover(); p != nil {
			safego.Recovered("sse transport", p)
			if s == nil {
				writeError(w, http.StatusInternalServerError, membrane.EINTERNAL, "internal error")
			}
		}
	}()
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, membrane.EINVALID, "the request body is too large or could not be read")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var params graphql.RawParams
	if err := dec.Decode(&params); err != nil {
		writeError(w, http.StatusBadRequest, membrane.EINVALID, "the request body is not a GraphQL request in JSON")
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	// Canceled when Do returns or a write fails, so that the operation
	// stops producing responses nobody will read.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	oc, opErr := exec.CreateOperationContext(ctx, &params)
	ctx = graphql.WithOperationContext(ctx, oc)

	s = &sseStream{w: w, rc: http.NewResponseController(w), gone: cancel}
	// The stream ends (and drops any later write) before Do returns, after
	// the keep-alive goroutine has returned.
	defer s.end()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	if !s.write(":\n\n") {
		return
	}
	if t.keepAlive > 0 {
		stop := s.keepAlive(t.keepAlive)
		defer stop()
	}
	if opErr != nil {
		s.next(exec.DispatchError(ctx, opErr))
	} else {
		responses, dctx := exec.DispatchOperation(ctx, oc)
		for {
			resp := responses(dctx)
			if resp == nil || !s.next(resp) {
				break
			}
		}
	}
	s.write("event: complete\n\n")
}

// sseStream is one response's stream of events. Its writes are serialised,
// and all dropped once one failed or the stream ended.
type sseStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// gone ends the operation when the client cannot be written to.
	gone func()

	mu sync.Mutex
	// dead: a write failed or the stream ended; nothing more is written.
	dead bool
}

// write writes text and flushes it, within sseWriteTimeout. It reports
// whether the client got it; false means the stream is dead.
func (s *sseStream) write(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return false
	}
	// Each write gets its own deadline: a stream lives longer than any
	// server-wide write timeout, but one write to a client that stopped
	// reading must not block for ever. Writers that cannot take deadlines
	// (in tests) go without.
	_ = s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	if _, err := io.WriteString(s.w, text); err != nil {
		s.die()
		return false
	}
	if err := s.rc.Flush(); err != nil {
		s.die()
		return false
	}
	return true
}

// die marks the stream dead and ends its operation; s.mu is held.
func (s *sseStream) die() {
	s.dead = true
	s.gone()
}

// next writes resp as a "next" event.
func (s *sseStream) next(resp *graphql.Response) bool {
	b, err := json.Marshal(resp)
	if err != nil {
		// Only a resolver's malformed raw JSON gets here: say so, coded,
		// without the value.
		b, _ = json.Marshal(graphql.Response{Errors: gqlerror.List{{Message: "Internal error.",
			Extensions: map[string]any{"code": graph.Code(membrane.EINTERNAL)}}}})
	}
	return s.write("event: next\ndata: " + string(b) + "\n\n")
}

// keepAlive writes ": ping" every interval until the returned stop, which
// waits for the goroutine to return.
func (s *sseStream) keepAlive(every time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	safego.Go("sse keep-alive", func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if !s.write(": ping\n\n") {
					return
				}
			}
		}
	})
	return func() {
		close(done)
		<-finished
	}
}

// end ends the stream: nothing is written to the ResponseWriter after it.
// It lifts the last write's deadline, which would otherwise cut the next
// response on a reused connection (net/http sets one per request only when
// the server has a WriteTimeout).
func (s *sseStream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dead {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
	s.dead = true
}
