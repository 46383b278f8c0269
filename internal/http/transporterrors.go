package http

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/membrane"
)

// transportErrors gives the errors that gqlgen's transports write
// themselves, without the error presenter (a GET whose variables are not
// JSON, a mutation over GET, an unsupported method or content type), the
// extensions.code every Membrane error carries: BAD_USER_INPUT, as they are
// all the client's doing. Only 4xx responses are buffered and rewritten,
// and only when an error lacks a code; everything else streams through.
func transportErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &codeWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		cw.finish()
	})
}

type codeWriter struct {
	http.ResponseWriter
	status int
	// buf holds a 4xx response's body until finish.
	buf *bytes.Buffer
}

func (c *codeWriter) WriteHeader(status int) {
	if c.status != 0 {
		return
	}
	c.status = status
	if status >= 400 && status < 500 {
		c.buf = &bytes.Buffer{}
		return
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *codeWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.buf != nil {
		return c.buf.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

func (c *codeWriter) finish() {
	if c.buf == nil {
		return
	}
	body := c.buf.Bytes()
	if fixed, ok := addErrorCodes(body); ok {
		body = fixed
		c.Header().Set("Content-Type", "application/json")
	}
	c.Header().Del("Content-Length")
	c.ResponseWriter.WriteHeader(c.status)
	_, _ = c.ResponseWriter.Write(body)
}

// addErrorCodes sets extensions.code to BAD_USER_INPUT on every error of a
// GraphQL response body that has none. It reports whether it changed body.
func addErrorCodes(body []byte) ([]byte, bool) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(body, &resp) != nil {
		return nil, false
	}
	var errs []map[string]any
	if json.Unmarshal(resp["errors"], &errs) != nil {
		return nil, false
	}
	changed := false
	for _, e := range errs {
		ext, _ := e["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
		}
		if c, _ := ext["code"].(string); c == "" {
			ext["code"] = graph.Code(membrane.EINVALID)
			e["extensions"] = ext
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	b, err := json.Marshal(errs)
	if err != nil {
		return nil, false
	}
	resp["errors"] = b
	out, err := json.Marshal(resp)
	return out, err == nil
}

// Flush lets streaming responses (SSE subscriptions) through; a buffered
// 4xx is written whole by finish.
func (c *codeWriter) Flush() { _ = c.FlushError() }

// FlushError is Flush reporting its failure (see touchWriter.FlushError).
func (c *codeWriter) FlushError() error {
	if c.buf != nil {
		return nil
	}
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// Hijack lets WebSocket upgrades take the connection over.
func (c *codeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(c.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
