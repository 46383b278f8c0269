package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/membrane/membrane/internal/apicode"
	"github.com/membrane/membrane/internal/membrane"
)

// Path is where the HTTP server serves MCP.
const Path = "/mcp"

// DefaultMaxMessageBytes bounds one message: the largest payload plus room
// for the rest of it, as the HTTP server bounds a request body.
const DefaultMaxMessageBytes = membrane.MaxPayloadBytes + 1<<20

// HTTPOptions configure the streamable HTTP handler.
type HTTPOptions struct {
	Options
	// MaxBodyBytes bounds a request body (0: DefaultMaxMessageBytes).
	MaxBodyBytes int64
	// LocalhostProtection refuses a request that reached a loopback
	// address under another host name (DNS rebinding: a web page making
	// the browser call a local server). The server sets it in open
	// development mode, where no key protects it; with keys configured the
	// key is the protection, and a proxy in front of the server on the
	// same machine presents its own host name.
	LocalhostProtection bool
}

// NewHTTPHandler serves MCP's streamable HTTP transport, statelessly:
// every POST carries whole JSON-RPC messages and gets its answers as JSON,
// and no session lives on the server between requests, so that any
// replica answers any request. Authentication, rate limits, body limits
// and logging are the HTTP server's (internal/http), as for /graphql: the
// caller's trust is in each request's context when it gets here.
func NewHTTPHandler(svc *membrane.Services, o HTTPOptions) http.Handler {
	limit := o.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	srv := NewServer(svc, o.Options)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: o.Log,
		DisableLocalhostProtection: !o.LocalhostProtection, MaxRequestBodyBytes: limit,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					WriteHTTPError(w, nil, http.StatusRequestEntityTooLarge, membrane.ETOOLARGE, fmt.Sprintf("the request body exceeds the limit of %d bytes", limit))
					return
				}
				WriteHTTPError(w, nil, http.StatusBadRequest, membrane.EINVALID, "could not read the request body")
				return
			}
			if bad := CheckMessage(b); bad != nil {
				writeJSONRPC(w, http.StatusBadRequest, bad)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	})
}

// WriteHTTPError answers request r to the MCP endpoint, refused before
// it reaches MCP (a missing key, a rate or size limit), with a JSON-RPC
// error: its message is GraphQL's, and its data carries the public code as
// a tool error carries it. The error answers r's id when the start of its
// body names one (requestID), so that a client fails that one call and
// goes on: the Go SDK's client ends its whole session on a refusal it
// cannot match to a call.
func WriteHTTPError(w http.ResponseWriter, r *http.Request, status int, domainCode, msg string) {
	code := CodeRefused
	switch status {
	case http.StatusRequestEntityTooLarge, http.StatusBadRequest:
		code = jsonrpc.CodeInvalidRequest
	}
	writeJSONRPC(w, status, protocolErrorFor(requestID(r), code, apicode.Of(domainCode), msg))
}

// idPeekBytes bounds what requestID reads of a refused request's body.
const idPeekBytes = 4 << 10

// requestID is the id of the JSON-RPC request r carries, when its body
// names it within its first idPeekBytes bytes at the top level (clients
// that write the id before the params), or nil.
func requestID(r *http.Request) json.RawMessage {
	if r == nil || r.Body == nil {
		return nil
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, idPeekBytes))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			return v
		}
	}
	return nil
}

func writeJSONRPC(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Operation names what an MCP request body asks, for the access log: the
// JSON-RPC method, and the tool a tools/call calls ("tools/call remember";
// a name that is no tool's is not logged, as clients choose it). It is
// "batch" for a batch, "" for what is not a request.
func Operation(body []byte) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		return "batch"
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	if m.Method == "tools/call" {
		if !slices.Contains(ToolNames(), m.Params.Name) {
			return m.Method + " (unknown tool)"
		}
		return m.Method + " " + m.Params.Name
	}
	return m.Method
}
