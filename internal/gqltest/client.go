package gqltest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// Client posts GraphQL requests to a real server over a real Neo4j, with
// the API key of one principal.
type Client struct {
	T     testing.TB
	URL   string // the server's base URL (no path)
	DB    *neo4j.DB
	Key   string // the principal's API key; empty sends none
	Actor string
	Keys  map[string]string // actor -> key of every principal of the server
	Ring  []membrane.APIKey
	Opts  membranehttp.HandlerOptions
	// Wrap, when set, wraps the handler of the servers Serve starts.
	Wrap func(http.Handler) http.Handler
}

// Error is one GraphQL error of a response.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Response is a GraphQL response (or subscription event) as received.
type Response struct {
	Data       json.RawMessage `json:"data"`
	Errors     []Error         `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
	// Status and Header are the HTTP response's (zero for an event).
	Status int         `json:"-"`
	Header http.Header `json:"-"`
	// Body is the whole response (or event) as received.
	Body []byte `json:"-"`
}

// Code is the first error's extensions.code ("" for none).
func (r Response) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	code, _ := r.Errors[0].Extensions["code"].(string)
	return code
}

// New starts a server whose keys authenticate a fresh admin principal (the
// client's) plus any others given, and returns the admin's client.
func New(t testing.TB, others ...membrane.Principal) *Client {
	t.Helper()
	return NewFull(t, nil, membranehttp.DefaultHandlerOptions(), others...)
}

// NewWith is New with setup applied to the server's wiring before it
// serves (to add optional services such as the change feed).
func NewWith(t testing.TB, setup func(*Wiring), others ...membrane.Principal) *Client {
	t.Helper()
	return NewFull(t, setup, membranehttp.DefaultHandlerOptions(), others...)
}

// NewOpts is New with a server configured by opts.
func NewOpts(t testing.TB, opts membranehttp.HandlerOptions, others ...membrane.Principal) *Client {
	t.Helper()
	return NewFull(t, nil, opts, others...)
}

// NewFull is New with both a setup (may be nil) and the server's options.
func NewFull(t testing.TB, setup func(*Wiring), opts membranehttp.HandlerOptions, others ...membrane.Principal) *Client {
	t.Helper()
	db := neo4jtest.DB(t)
	admin := membrane.Principal{Actor: "tester-" + membrane.NewID(), Role: membrane.RoleAdmin,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}}
	ring, keys := APIKeys(t, append([]membrane.Principal{admin}, others...)...)
	c := &Client{T: t, DB: db, Key: keys[admin.Actor], Actor: admin.Actor, Keys: keys, Ring: ring, Opts: opts}
	c.URL = c.Serve(setup)
	return c
}

// APIKeys returns a key ring that authenticates each of principals by a
// fresh secret, and those secrets by actor.
func APIKeys(t testing.TB, principals ...membrane.Principal) ([]membrane.APIKey, map[string]string) {
	t.Helper()
	keys := map[string]string{}
	var ring []membrane.APIKey
	for _, p := range principals {
		secret := "key-" + membrane.NewID()
		k, err := membrane.NewAPIKey(membrane.HashKey(secret), p)
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, k)
		keys[p.Actor] = secret
	}
	return ring, keys
}

// Serve starts one more server (a replica) over the client's database,
// keys and options, and returns its URL.
func (c *Client) Serve(setup func(*Wiring)) string {
	w := NewWiring(c.DB, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if setup != nil {
		setup(w)
	}
	var h http.Handler = membranehttp.NewHandler(w.Resolver(), c.DB, membrane.NewKeyring(c.Ring), slog.New(slog.NewTextHandler(io.Discard, nil)), c.Opts)
	if c.Wrap != nil {
		h = c.Wrap(h)
	}
	srv := httptest.NewServer(h)
	c.T.Cleanup(srv.Close)
	return srv.URL
}

// As returns a client of the same server acting as another principal.
func (c *Client) As(actor string) *Client {
	d := *c
	d.Key, d.Actor = c.Keys[actor], actor
	return &d
}

// Raw sends a query and returns the decoded response, failing the test
// when the body is not JSON.
func (c *Client) Raw(query string, vars map[string]any) Response {
	c.T.Helper()
	resp := c.Post(map[string]any{"query": query, "variables": vars})
	if !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(resp.Body, &resp); err != nil {
			c.T.Fatalf("decode response %q: %v", resp.Body, err)
		}
	}
	return resp
}

// Do sends a query that must succeed and decodes data into out.
func (c *Client) Do(query string, vars map[string]any, out any) {
	c.T.Helper()
	resp := c.Raw(query, vars)
	if len(resp.Errors) > 0 {
		c.T.Fatalf("unexpected errors: %+v", resp.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			c.T.Fatalf("decode data %s: %v", resp.Data, err)
		}
	}
}

// Fail sends a query that must fail with code and returns its errors.
func (c *Client) Fail(code, query string, vars map[string]any) []Error {
	c.T.Helper()
	resp := c.Raw(query, vars)
	if len(resp.Errors) == 0 {
		c.T.Fatalf("want error %s, got data %s", code, resp.Data)
	}
	if got := resp.Errors[0].Extensions["code"]; got != code {
		c.T.Fatalf("code = %v, want %s (errors %+v)", got, code, resp.Errors)
	}
	return resp.Errors
}

// Send sends an HTTP request to the client's server (path after its URL)
// with its key and the headers given, and returns the response, whatever
// it is: a JSON body is decoded as a GraphQL response.
func (c *Client) Send(method, path string, body io.Reader, header map[string]string) Response {
	c.T.Helper()
	req, err := http.NewRequest(method, c.URL+path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	out := Response{Status: resp.StatusCode, Header: resp.Header}
	out.Body, _ = io.ReadAll(resp.Body)
	if strings.Contains(resp.Header.Get("Content-Type"), "json") {
		if err := json.Unmarshal(out.Body, &out); err != nil {
			c.T.Fatalf("decode %q: %v", out.Body, err)
		}
	}
	return out
}

// Post sends a GraphQL request body (query, variables, extensions…).
func (c *Client) Post(req map[string]any) Response {
	c.T.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		c.T.Fatal(err)
	}
	return c.Send(http.MethodPost, "/graphql", bytes.NewReader(b), map[string]string{"Content-Type": "application/json"})
}

// Count returns how many records carry scope, straight from the store.
func (c *Client) Count(scope string) int64 {
	c.T.Helper()
	ctx := membrane.NewContextWithTrust(c.T.Context(), membrane.SystemTrust("test"))
	n, err := c.DB.CountRecords(ctx, membrane.RecordFilter{Scopes: []string{scope}})
	if err != nil {
		c.T.Fatal(err)
	}
	return n
}

// Create makes a record of type typ in scope through the API and returns
// its id; extra are further fields of its RecordInput.
func (c *Client) Create(scope, typ string, payload map[string]any, extra map[string]any) string {
	c.T.Helper()
	in := map[string]any{"type": typ, "scope": scope, "payload": payload,
		"provenance": map[string]any{"sources": []any{map[string]any{"kind": "EVENT", "ref": "seed"}}}}
	for k, v := range extra {
		in[k] = v
	}
	var out struct{ CreateRecord struct{ ID string } }
	c.Do(`mutation($in: RecordInput!) { createRecord(input: $in, actor: "seeder") { id } }`, map[string]any{"in": in}, &out)
	return out.CreateRecord.ID
}

// Fact is the payload of a semantic record "subject is x".
func Fact(subject string) map[string]any {
	return map[string]any{"semantic": map[string]any{"subject": subject, "predicate": "is", "object": "x",
		"evidence": []any{map[string]any{"sourceType": "test", "sourceId": "t"}}}}
}

// For returns a copy of the client reporting to t (a subtest's failures
// must not stop its parent).
func (c *Client) For(t testing.TB) *Client {
	d := *c
	d.T = t
	return &d
}

// WithKey returns a copy of the client sending key (empty: none) as its
// API key.
func (c *Client) WithKey(key string) *Client {
	d := *c
	d.Key = key
	return &d
}
