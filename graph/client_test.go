package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// client posts GraphQL requests to a real server over a real Neo4j, with
// the API key of one principal.
type client struct {
	t     testing.TB
	url   string
	db    *neo4j.DB
	key   string
	actor string
	keys  map[string]string // actor -> key of every principal of the server
	ring  []membrane.APIKey
	opts  membranehttp.HandlerOptions
	// wrap, when set, wraps the handler of the servers serve starts.
	wrap func(http.Handler) http.Handler
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Data       json.RawMessage `json:"data"`
	Errors     []gqlError      `json:"errors"`
	Extensions map[string]any  `json:"extensions"`
	status     int
	body       []byte // the whole response (or event) as received
}

// newClient starts a server whose keys authenticate a fresh admin principal
// (the client's) plus any others given, and returns the admin's client.
func newClient(t testing.TB, others ...membrane.Principal) *client {
	t.Helper()
	return newClientFull(t, nil, membranehttp.DefaultHandlerOptions(), others...)
}

// newClientWith is newClient with setup applied to the server's resolver
// before it serves (to add optional services such as the change feed).
func newClientWith(t testing.TB, setup func(*wiring), others ...membrane.Principal) *client {
	t.Helper()
	return newClientFull(t, setup, membranehttp.DefaultHandlerOptions(), others...)
}

// newClientOpts is newClient with a server configured by opts.
func newClientOpts(t testing.TB, opts membranehttp.HandlerOptions, others ...membrane.Principal) *client {
	t.Helper()
	return newClientFull(t, nil, opts, others...)
}

func newClientFull(t testing.TB, setup func(*wiring), opts membranehttp.HandlerOptions, others ...membrane.Principal) *client {
	t.Helper()
	db := neo4jtest.DB(t)
	admin := membrane.Principal{Actor: "tester-" + membrane.NewID(), Role: membrane.RoleAdmin,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{membrane.AllScopes}}
	keys := map[string]string{}
	var ring []membrane.APIKey
	for _, p := range append([]membrane.Principal{admin}, others...) {
		secret := "key-" + membrane.NewID()
		k, err := membrane.NewAPIKey(membrane.HashKey(secret), p)
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, k)
		keys[p.Actor] = secret
	}
	c := &client{t: t, db: db, key: keys[admin.Actor], actor: admin.Actor, keys: keys, ring: ring, opts: opts}
	c.url = c.serve(setup)
	return c
}

// serve starts one more server (a replica) over the client's database,
// keys and options, and returns its URL.
func (c *client) serve(setup func(*wiring)) string {
	w := newWiring(c.db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if setup != nil {
		setup(w)
	}
	var h http.Handler = membranehttp.NewHandler(w.resolver(), c.db, membrane.NewKeyring(c.ring), slog.New(slog.NewTextHandler(io.Discard, nil)), c.opts)
	if c.wrap != nil {
		h = c.wrap(h)
	}
	srv := httptest.NewServer(h)
	c.t.Cleanup(srv.Close)
	return srv.URL
}

// as returns a client of the same server acting as another principal.
func (c *client) as(actor string) *client {
	d := *c
	d.key, d.actor = c.keys[actor], actor
	return &d
}

// raw sends a request and returns the decoded response.
func (c *client) raw(query string, vars map[string]any) gqlResponse {
	c.t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.url+"/graphql", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out gqlResponse
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatalf("decode response %q: %v", b, err)
	}
	out.status = resp.StatusCode
	out.body = b
	return out
}

// do sends a request that must succeed and decodes data into out.
func (c *client) do(query string, vars map[string]any, out any) {
	c.t.Helper()
	resp := c.raw(query, vars)
	if len(resp.Errors) > 0 {
		c.t.Fatalf("unexpected errors: %+v", resp.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			c.t.Fatalf("decode data %s: %v", resp.Data, err)
		}
	}
}

// fail sends a request that must fail with code and returns its errors.
func (c *client) fail(code, query string, vars map[string]any) []gqlError {
	c.t.Helper()
	resp := c.raw(query, vars)
	if len(resp.Errors) == 0 {
		c.t.Fatalf("want error %s, got data %s", code, resp.Data)
	}
	if got := resp.Errors[0].Extensions["code"]; got != code {
		c.t.Fatalf("code = %v, want %s (errors %+v)", got, code, resp.Errors)
	}
	return resp.Errors
}

// count returns how many records carry scope, straight from the store.
func (c *client) count(scope string) int64 {
	c.t.Helper()
	ctx := membrane.NewContextWithTrust(c.t.Context(), membrane.SystemTrust("test"))
	n, err := c.db.CountRecords(ctx, membrane.RecordFilter{Scopes: []string{scope}})
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

const recordFields = `
fragment R on Record {
  id type sensitivity confidence salience scope tags createdAt updatedAt status version
  lifecycle { curve halfLifeSeconds minSalience maxAgeSeconds reinforcementGain lastReinforcedAt pinned deletionPolicy }
  provenance { createdBy sources { kind ref hash createdBy timestamp } }
  payload {
    __typename
    ... on EpisodicPayload {
      timeline { t eventKind ref summary }
      toolGraph { id tool args result timestamp dependsOn }
      environment { os osVersion toolVersions workingDirectory context }
      outcome artifacts toolGraphRef
    }
    ... on WorkingPayload {
      threadId state nextActions openQuestions contextSummary
      activeConstraints { type key value required }
    }
    ... on SemanticPayload {
      subject predicate object revisionPolicy
      validity { mode conditions start end }
      evidence { sourceType sourceId timestamp }
    }
    ... on CompetencePayload {
      skillName requiredTools failureModes fallbacks version
      triggers { signal conditions }
      recipe { step tool argsSchema validation }
      performance { successCount failureCount successRate avgLatencyMs lastUsedAt }
    }
    ... on PlanGraphPayload {
      planId version intent constraints inputsSchema outputsSchema
      nodes { id op params guards }
      edges { from to kind }
      metrics { avgLatencyMs failureRate executionCount lastExecutedAt }
    }
    ... on EntityPayload {
      canonicalName primaryType types summary
      aliases { value kind locale }
      identifiers { namespace value }
    }
  }
}`
