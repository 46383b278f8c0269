package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

const replayRelationQ = `mutation($a: ID!, $b: ID!, $w: Float, $k: String) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: $b, weight: $w, idempotencyKey: $k) {
  predicate sourceId targetId weight createdAt actor } }`

type replayedRelation struct {
	AddRelation struct {
		Predicate, SourceID, TargetID, CreatedAt, Actor string
		Weight                                          float64
	}
}

// narrowed sends a request of c's principal narrowed to the ceiling max
// ("" for none) and decodes its data into out.
func narrowed(c *client, max, query string, vars map[string]any, out any) gqltest.Response {
	c.T.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		c.T.Fatal(err)
	}
	header := map[string]string{"Content-Type": "application/json"}
	if max != "" {
		header[membranehttp.HeaderMaxSensitivity] = max
	}
	res := c.Send(http.MethodPost, "/graphql", bytes.NewReader(body), header)
	if len(res.Errors) == 0 && out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			c.T.Fatalf("decode %s: %v", res.Body, err)
		}
	}
	return res
}

// TestReplayUnderCurrentTrust: an idempotent replay answers under the
// replaying request's trust, not the first one's: a record the first
// request linked to that the replaying one may not see (its principal
// narrowed two levels below it) is neither shown nor named, by the
// capture's edges nor by addRelation (CONFLICT, as a relation gone); seen
// redacted, the edge is shown, as a read of relations shows it.
func TestReplayUnderCurrentTrust(t *testing.T) {
	scope := neo4jtest.Scope(t)
	wr := writer("writer", membrane.SensitivityHigh, scope)
	c := newClient(t, wr)
	w := c.as(wr.Actor)
	// A high entity the writer sees in full: its public capture links to it.
	name := "replayed-" + word()
	hiEntity := c.capture(map[string]any{"source": "admin", "scope": scope, "sensitivity": "HIGH",
		"content": map[string]any{"person": name}}).CaptureMemory.Created[0].ID
	capVars := map[string]any{"k": "cap-" + membrane.NewID(), "in": map[string]any{"source": "w", "scope": scope, "sensitivity": "PUBLIC",
		"content": map[string]any{"person": name}}}
	var first captureOut
	w.Do(captureQ, capVars, &first)
	var hidden []string // the first capture's edges, without those to the high entity
	for _, e := range first.CaptureMemory.Edges {
		if e.SourceID != hiEntity && e.TargetID != hiEntity {
			hidden = append(hidden, e.Predicate+" "+e.SourceID+">"+e.TargetID)
		}
	}
	all := edgeList(first)
	if len(hidden) == len(all) {
		t.Fatalf("the capture did not link to the high entity %s: %v", hiEntity, all)
	}
	src := w.Create(scope, "SEMANTIC", gqltest.Fact("source-"+word()), map[string]any{"sensitivity": "PUBLIC"})
	tgt := c.Create(scope, "SEMANTIC", gqltest.Fact("target-"+word()), map[string]any{"sensitivity": "HIGH"})
	relVars := map[string]any{"a": src, "b": tgt, "w": 0.3, "k": "rel-" + membrane.NewID()}
	var rel replayedRelation
	w.Do(replayRelationQ, relVars, &rel)

	tests := []struct {
		name string
		max  string
		// shown: the high records are shown (redacted or in full).
		shown bool
	}{
		{"as the first request", "", true},
		{"one level below the high records (redacted)", "MEDIUM", true},
		{"two levels below the high records (invisible)", "LOW", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var again captureOut
			res := narrowed(w, tc.max, captureQ, capVars, &again)
			if res.Code() != "" {
				t.Fatalf("capture replay: %s", res.Body)
			}
			want := all
			if !tc.shown {
				want = hidden
			}
			if got := edgeList(again); !slices.Equal(got, want) || again.CaptureMemory.Primary.ID != first.CaptureMemory.Primary.ID {
				t.Fatalf("capture replay edges %v, want %v", got, want)
			}
			if !tc.shown && strings.Contains(string(res.Body), hiEntity) {
				t.Fatalf("capture replay names the invisible entity: %s", res.Body)
			}
			var relAgain replayedRelation
			res = narrowed(w, tc.max, replayRelationQ, relVars, &relAgain)
			switch {
			case tc.shown && (res.Code() != "" || relAgain != rel):
				t.Fatalf("relation replay %s, want %+v", res.Body, rel)
			case !tc.shown && (res.Code() != "CONFLICT" || strings.Contains(string(res.Body), tgt)):
				t.Fatalf("relation replay %s, want CONFLICT without the target", res.Body)
			}
		})
	}
}

// edgeList renders a capture's edges in the order answered.
func edgeList(out captureOut) []string {
	s := []string{}
	for _, e := range out.CaptureMemory.Edges {
		s = append(s, e.Predicate+" "+e.SourceID+">"+e.TargetID)
	}
	return s
}

// txCounter counts the store's transactions.
type txCounter struct{ n atomic.Int64 }

func (c *txCounter) Transaction(ctx context.Context, _ string) (context.Context, func(int, string)) {
	c.n.Add(1)
	return ctx, func(int, string) {}
}

// countingClient is a client of a server whose store counts its
// transactions.
func countingClient(t *testing.T) (*client, *txCounter) {
	t.Helper()
	c, counter := newClient(t), &txCounter{}
	c.DB = neo4jtest.Open(t, counter)
	c.URL = c.Serve(nil)
	return c, counter
}

// TestReplayAnswersStoredResult: an idempotency key stores its request's
// whole answer, edges included, so a replay is the one transaction that
// finds the key (the edges are not read again) and answers with what the
// first request wrote, even when the edge changed since (addRelation of
// the same pair updates its weight).
func TestReplayAnswersStoredResult(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c, counter := countingClient(t)

	capVars := map[string]any{"k": "cap-" + membrane.NewID(), "in": map[string]any{"source": "s", "scope": scope,
		"content": map[string]any{"subject": "stored-" + word(), "predicate": "uses", "object": "o"}}}
	var firstCap captureOut
	c.Do(captureQ, capVars, &firstCap)
	a := c.Create(scope, "SEMANTIC", gqltest.Fact("a-"+word()), nil)
	b := c.Create(scope, "SEMANTIC", gqltest.Fact("b-"+word()), nil)
	relVars := map[string]any{"a": a, "b": b, "w": 0.3, "k": "rel-" + membrane.NewID()}
	var firstRel replayedRelation
	c.Do(replayRelationQ, relVars, &firstRel)
	// The same relation again, without the key: its weight changes.
	var updated replayedRelation
	c.Do(replayRelationQ, map[string]any{"a": a, "b": b, "w": 0.9}, &updated)
	if updated.AddRelation.Weight != 0.9 {
		t.Fatalf("updated relation %+v", updated)
	}

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"captureMemory", func(t *testing.T) {
			var again captureOut
			c.Do(captureQ, capVars, &again)
			if got, want := edgeList(again), edgeList(firstCap); len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("replayed edges %v, want %v", got, want)
			}
		}},
		{"addRelation", func(t *testing.T) {
			var again replayedRelation
			c.Do(replayRelationQ, relVars, &again)
			if again != firstRel {
				t.Fatalf("replayed relation %+v, want the first %+v", again, firstRel)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := counter.n.Load()
			tc.check(t)
			if n := counter.n.Load() - before; n != 1 {
				t.Fatalf("the replay ran %d transactions, want 1", n)
			}
		})
	}
}
