package http

import (
	"bufio"
	"net"
	"net/http"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// recoverPanics answers a request whose handler panicked outside a
// resolver (gqlgen recovers those) with a coded 500, when nothing was
// written yet, and reports the panic as every other (safego): logged at
// ERROR with its stack, counted. net/http would recover it too, but only
// to drop the connection, with a line on the standard logger and no count.
// http.ErrAbortHandler, a deliberate abort, goes on up.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &touchWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			safego.Recovered("http handler", p, "path", r.URL.Path)
			if !tw.touched {
				writeError(w, http.StatusInternalServerError, membrane.EINTERNAL, "Internal error.")
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// touchWriter remembers whether anything was written (or the connection
// hijacked).
type touchWriter struct {
	http.ResponseWriter
	touched bool
}

func (t *touchWriter) WriteHeader(status int) {
	t.touched = true
	t.ResponseWriter.WriteHeader(status)
}

func (t *touchWriter) Write(b []byte) (int, error) {
	t.touched = true
	return t.ResponseWriter.Write(b)
}

// Flush passes streaming responses through.
func (t *touchWriter) Flush() { _ = t.FlushError() }

// FlushError flushes and reports a failed flush (http.ResponseController
// prefers it to Flush), so that a stream learns at once that its client
// is gone.
func (t *touchWriter) FlushError() error {
	t.touched = true
	return http.NewResponseController(t.ResponseWriter).Flush()
}

// Hijack hands the connection to a WebSocket.
func (t *touchWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.touched = true
	return http.NewResponseController(t.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (t *touchWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
