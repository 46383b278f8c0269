package graph_test

import (
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
)

// client is the shared test client with the helpers of this package's
// tests (methods of its own, such as get, retrieve and capture).
type client struct{ *gqltest.Client }

// newClient starts a server whose keys authenticate a fresh admin principal
// (the client's) plus any others given, and returns the admin's client.
func newClient(t testing.TB, others ...membrane.Principal) *client {
	t.Helper()
	return &client{gqltest.New(t, others...)}
}

// newClientWith is newClient with setup applied to the server's wiring.
func newClientWith(t testing.TB, setup func(*gqltest.Wiring), others ...membrane.Principal) *client {
	t.Helper()
	return &client{gqltest.NewWith(t, setup, others...)}
}

// newClientOpts is newClient with a server configured by opts.
func newClientOpts(t testing.TB, opts membranehttp.HandlerOptions, others ...membrane.Principal) *client {
	t.Helper()
	return &client{gqltest.NewOpts(t, opts, others...)}
}

// as returns a client of the same server acting as another principal.
func (c *client) as(actor string) *client { return &client{c.Client.As(actor)} }

// with returns the client reporting to t (a subtest's failures must not
// stop its parent).
func (c *client) with(t testing.TB) *client { return &client{c.Client.For(t)} }

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
