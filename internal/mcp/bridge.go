package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/membrane/membrane/internal/apicode"
	"github.com/membrane/membrane/internal/membrane"
)

// DefaultURL is where the stdio bridge finds the server when MEMBRANE_URL
// is not set: a server on its default address.
const DefaultURL = "http://127.0.0.1:8080"

// BridgeOptions say which server the stdio bridge forwards to, and as whom.
type BridgeOptions struct {
	// URL is the server's base URL (MEMBRANE_URL); the bridge calls its
	// /mcp.
	URL string
	// APIKey is sent as Authorization: Bearer (MEMBRANE_API_KEY); empty
	// sends none, which a server in open development mode accepts.
	APIKey string
	// MaxSensitivity and Scopes, when set, narrow the key's trust as the
	// X-Membrane-Max-Sensitivity and X-Membrane-Scopes headers do.
	MaxSensitivity string
	Scopes         *string
	// HTTPClient makes the requests (nil: one whose requests time out
	// after CallTimeout).
	HTTPClient *http.Client
	// Version is the bridge's version, reported at initialize.
	Version string
	// Log receives what the bridge has to say (never stdout, which is the
	// protocol's); nil: slog.Default().
	Log *slog.Logger
}

// CallTimeout bounds one forwarded call by default: longer than the
// server's own request timeout (30 s), so that the server's TIMEOUT, not
// the bridge's, is what a slow call gets.
const CallTimeout = 60 * time.Second

// Bridge is the stdio bridge: an MCP server with Membrane's tools, each of
// whose calls it forwards to a running Membrane server's /mcp with the
// configured key. Trust is enforced by that server alone (the bridge holds
// no store and runs no job); the bridge only relays, and turns a server it
// cannot reach or that refuses it into a tool error.
type Bridge struct {
	o      BridgeOptions
	server *sdk.Server
	client *sdk.Client

	mu      sync.Mutex
	session *sdk.ClientSession
}

// NewBridge returns the bridge for o. It lists the tools it was built
// with, so that a client sees them even while the server is down; their
// arguments are validated by the server, not here.
func NewBridge(o BridgeOptions) *Bridge {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	o.URL = strings.TrimRight(o.URL, "/")
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: CallTimeout}
	}
	inner := *o.HTTPClient
	inner.Transport = headerTransport{base: o.HTTPClient.Transport, o: o}
	o.HTTPClient = &inner
	b := &Bridge{o: o, server: newSDKServer(o.Version),
		client: sdk.NewClient(&sdk.Implementation{Name: Name + "-stdio-bridge", Version: o.Version}, nil)}
	for _, t := range tools() {
		def := t.spec()
		b.server.AddTool(def, b.forward(def.Name))
	}
	return b
}

// Server is the bridge's MCP server (what RunStdio serves).
func (b *Bridge) Server() *sdk.Server { return b.server }

// Close ends the bridge's connection to the server.
func (b *Bridge) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session == nil {
		return nil
	}
	err := b.session.Close()
	b.session = nil
	return err
}

// forward is the handler of tool name: the same call, with the same
// arguments, to the server; its answer as it came.
func (b *Bridge) forward(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args json.RawMessage
		if req != nil && req.Params != nil {
			args = req.Params.Arguments
		}
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		// The server's refusal of a request (a bad key, its rate limit),
		// which the SDK reports by its HTTP status alone, is caught here.
		slot := &refusal{}
		ctx = context.WithValue(ctx, refusalKey{}, slot)
		s, err := b.connect(ctx)
		if err == nil {
			var res *sdk.CallToolResult
			if res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args}); err == nil {
				return res, nil
			}
			// The connection may be what failed: the next call connects
			// anew (the server keeps no session, so nothing is lost).
			b.drop(s)
		}
		if te := slot.get(); te != nil {
			return toolErrorResult(*te), nil
		}
		return toolErrorResult(remoteError(err, b.o.URL)), nil
	}
}

// refusal holds what the server answered to a request it refused.
type refusal struct {
	mu sync.Mutex
	te *ToolError
}

func (r *refusal) set(te *ToolError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.te = te
}

func (r *refusal) get() *ToolError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.te
}

type refusalKey struct{}

// connect returns the session to the server, connecting (initialize) when
// there is none.
func (b *Bridge) connect(ctx context.Context) (*sdk.ClientSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session != nil {
		return b.session, nil
	}
	t := &sdk.StreamableClientTransport{Endpoint: b.o.URL + Path, HTTPClient: b.o.HTTPClient, DisableStandaloneSSE: true, MaxRetries: -1}
	s, err := b.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	b.session = s
	return s, nil
}

// drop forgets session s after a failed call.
func (b *Bridge) drop(s *sdk.ClientSession) {
	b.mu.Lock()
	if b.session == s {
		b.session = nil
	}
	b.mu.Unlock()
	_ = s.Close()
}

// headerTransport sends the key and the narrowing with every request.
type headerTransport struct {
	base http.RoundTripper
	o    BridgeOptions
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.o.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+h.o.APIKey)
	}
	if h.o.MaxSensitivity != "" {
		r.Header.Set("X-Membrane-Max-Sensitivity", h.o.MaxSensitivity)
	}
	if h.o.Scopes != nil {
		r.Header.Set("X-Membrane-Scopes", *h.o.Scopes)
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if slot, _ := r.Context().Value(refusalKey{}).(*refusal); err == nil && slot != nil && resp.StatusCode >= 400 {
		// A refusal is a short JSON-RPC error (WriteHTTPError): read it
		// (bounded), note it, and hand the SDK the same body.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if te := refusalOf(b); te != nil {
			slot.set(te)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, err
}

// RunStdio serves the bridge over stdin and stdout (newline-delimited
// JSON-RPC) until stdin ends or ctx does. Each line is checked before the
// SDK reads it (CheckMessage): a line that is not JSON, not a JSON-RPC
// message, or longer than maxLine bytes (0: DefaultMaxMessageBytes) is
// answered with a JSON-RPC error and the session goes on.
func (b *Bridge) RunStdio(ctx context.Context, stdin io.Reader, stdout io.Writer, maxLine int) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxMessageBytes
	}
	out := &lockedWriter{w: stdout}
	pr, pw := io.Pipe()
	go func() {
		err := filterLines(stdin, pw, out, maxLine)
		_ = pw.CloseWithError(err) // nil: EOF, the session ends
	}()
	// The SDK's own bound is never reached: the filter passes only lines
	// of at most maxLine bytes.
	s, err := b.server.Connect(ctx, &sdk.IOTransport{Reader: pr, Writer: nopCloser{out}, MaxLineLength: maxLine + 1}, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- s.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = s.Close()
		err = <-done
	}
	_ = pr.Close()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// filterLines copies each JSON-RPC message of in, one a line, to valid,
// and answers on out what it refuses: a line that is not a message
// (CheckMessage), or one over limit bytes (read and dropped to its end, so
// that the next line is read whole).
func filterLines(in io.Reader, valid io.Writer, out io.Writer, limit int) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(bytes.TrimRight(chunk, "\r\n")) > limit {
				tooLong, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			msg := fmt.Sprintf("the message exceeds the limit of %d bytes", limit)
			if _, werr := out.Write(append(ProtocolError(jsonrpc.CodeInvalidRequest, apicode.Of(membrane.ETOOLARGE), msg), '\n')); werr != nil {
				return werr
			}
			tooLong = false
		} else if m := bytes.TrimSpace(line); len(m) > 0 {
			if bad := CheckMessage(m); bad != nil {
				if _, werr := out.Write(append(bad, '\n')); werr != nil {
					return werr
				}
			} else if _, werr := valid.Write(append(m, '\n')); werr != nil {
				return werr
			}
		}
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// lockedWriter serialises writes: the SDK's answers and the filter's
// refusals share stdout, one whole line a write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
