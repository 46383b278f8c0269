package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/membrane/membrane/internal/embedding"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// fakeDims are the dimensions of the fake model: those of the offline
// embedder (the model inside Neo4j), because a database holds one vector
// index and the eval embeds with that one in the same test database. The
// fake uses the first 8 axes only.
const fakeDims = 384

// concepts put synonyms on one axis of the fake embedding model, so that
// vector search finds what full-text search cannot.
var concepts = map[string]int{
	"car": 0, "automobile": 0, "vehicle": 0,
	"postgres": 1, "database": 1, "sql": 1,
	"deploy": 2, "release": 2, "ship": 2,
}

// fakeEmbed is the fake model: the normalised sum of one axis per word
// (a concept's, or one of the last five by hash).
func fakeEmbed(text string) []float64 {
	v := make([]float64, fakeDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if i, ok := concepts[w]; ok {
			v[i]++
		} else {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[3+h.Sum32()%5]++
		}
	}
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n > 0 {
		for i := range v {
			v[i] /= math.Sqrt(n)
		}
	}
	return v
}

func cosine(a, b []float64) float64 {
	var d float64
	for i := range a {
		d += a[i] * b[i]
	}
	return d // both normalised
}

// fakeEmbeddingServer is an OpenAI-compatible embeddings endpoint over
// fakeEmbed; it fails while failing is set.
func fakeEmbeddingServer(t *testing.T, failing *atomic.Bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data := make([]map[string]any, len(req.Input))
		for i, s := range req.Input {
			data[i] = map[string]any{"index": i, "embedding": fakeEmbed(s)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// vectorClient is a client of a server whose embedder is a
// fakeEmbeddingServer (failing while failing is set), with the vector
// index in place.
func vectorClient(t *testing.T, failing *atomic.Bool) *client {
	return vectorClientWith(t, failing, func(*gqltest.Wiring) {})
}

// vectorClientWith is vectorClient with setup changing the wiring too.
func vectorClientWith(t *testing.T, failing *atomic.Bool, setup func(*gqltest.Wiring)) *client {
	t.Helper()
	emb, err := embedding.New(embedding.Config{Endpoint: fakeEmbeddingServer(t, failing), Model: "fake-1", Dimensions: fakeDims})
	if err != nil {
		t.Fatal(err)
	}
	c := newClientWith(t, func(w *gqltest.Wiring) {
		w.Options.Embedder = emb
		setup(w)
	})
	if err := c.DB.EnsureVectorIndex(t.Context(), fakeDims); err != nil {
		t.Fatal(err)
	}
	return c
}

// writeVectorRecords writes the vector tests' records in scope, each
// holding a fresh word w: a capture about an automobile, an ingested event
// and a high capture (above the embedding ceiling); it returns w and their
// ids.
func writeVectorRecords(c *client, scope string) (w, broke, ev, secret string) {
	neo4jtest.DeleteAtEnd(c.T, c.DB, scope)
	w = word()
	broke = c.capture(map[string]any{"source": "s", "scope": scope, "summary": "the automobile broke down " + w}).CaptureMemory.Primary.ID
	var out struct{ IngestEvent struct{ ID string } }
	c.Do(`mutation($s: String!, $sum: String!) { ingestEvent(input: {source: "s", eventKind: "note", ref: "r", summary: $sum, scope: $s}) { id } }`,
		map[string]any{"s": scope, "sum": "we ship on friday " + w}, &out)
	secret = c.capture(map[string]any{"source": "s", "scope": scope, "sensitivity": "HIGH", "summary": "automobile secret " + w}).CaptureMemory.Primary.ID
	return w, broke, out.IngestEvent.ID, secret
}

func TestVectorSearch(t *testing.T) {
	scope := neo4jtest.Scope(t)
	var failing atomic.Bool
	c := vectorClient(t, &failing)
	w, broke, ev, secret := writeVectorRecords(c, scope)
	awaitSearch(t, c)

	// "vehicle" is in no record's text: only the vector finds the automobile.
	got := c.retrieve(map[string]any{"query": "vehicle", "scopes": []any{scope}})
	if !got.Retrieve.VectorUsed || len(got.Retrieve.Hits) == 0 || got.Retrieve.Hits[0].Record.ID != broke {
		t.Fatalf("vehicle: %+v", got.Retrieve)
	}
	h := got.Retrieve.Hits[0]
	want := cosine(fakeEmbed("vehicle"), fakeEmbed("event the automobile broke down "+w))
	// The best fused score has relevance 1 (fused relative to the best).
	if h.Parts.Text != 0 || h.Parts.Vector == nil || math.Abs(*h.Parts.Vector-want) > 1e-6 || math.Abs(h.Parts.Relevance-1) > 1e-6 {
		t.Errorf("vector-only hit parts %+v (vector %v), want vector %v", h.Parts, h.Parts.Vector, want)
	}
	for _, x := range got.Retrieve.Hits {
		if x.Record.ID == secret {
			t.Error("a record above the embedding ceiling was found by its vector")
		}
	}
	// Both: full text and vector blend; the high record has no vector.
	both := c.retrieve(map[string]any{"query": "automobile " + w, "scopes": []any{scope}})
	found := map[string]hitOut{}
	for _, x := range both.Retrieve.Hits {
		found[x.Record.ID] = x
	}
	if x, ok := found[broke]; !ok || x.Parts.Text == 0 || x.Parts.Vector == nil {
		t.Errorf("blended hit %+v", x)
	}
	// The high record is encrypted at rest: no text in the index and no
	// vector; the admin finds it by its blind terms alone.
	if x, ok := found[secret]; !ok || x.Parts.Text == 0 || x.Parts.Vector != nil {
		t.Errorf("high record %+v (found %v): want a blind text match and no vector", x, ok)
	}
	if x, ok := found[ev]; !ok || x.Parts.Vector == nil {
		t.Errorf("ingested event %+v: found %v, must have a vector", x, ok)
	}
	// The embedder down: full text only, and said so.
	failing.Store(true)
	down := c.retrieve(map[string]any{"query": "automobile " + w, "scopes": []any{scope}})
	if down.Retrieve.VectorUsed || len(down.Retrieve.Hits) != 3 || down.Retrieve.Hits[0].Parts.Vector != nil {
		t.Errorf("embedder down: %+v", down.Retrieve)
	}
	// ... and the caller is told, beside the data, without the cause.
	resp := c.Raw(retrieveQ, map[string]any{"in": map[string]any{"query": "automobile " + w, "scopes": []any{scope}}})
	if w, _ := resp.Extensions["warnings"].([]any); len(resp.Errors) > 0 || len(w) != 1 || w[0] != membrane.WarnNoVector {
		t.Errorf("embedder down: errors %v, extensions %v; want the warning %q", resp.Errors, resp.Extensions, membrane.WarnNoVector)
	}
	failing.Store(false)
	if up := c.Raw(retrieveQ, map[string]any{"in": map[string]any{"query": "automobile " + w, "scopes": []any{scope}}}); up.Extensions["warnings"] != nil {
		t.Errorf("embedder up again: warnings %v", up.Extensions["warnings"])
	}
	failing.Store(true)
	// Captures still work, without vectors.
	c.capture(map[string]any{"source": "s", "scope": scope, "summary": "while the model is down"})
}

// TestVectorMatchPassesContext: a match found by its meaning alone is a
// seed like a match by words: the turn after it in its session gets the
// context signal (membrane.SeedScore; it is the only seed, so T = 1)
// although neither its words nor its vector match the query.
func TestVectorMatchPassesContext(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := vectorClient(t, new(atomic.Bool))
	neo4jtest.DeleteAtEnd(t, c.DB, scope)
	ids := map[string]string{}
	writeEpisodes(t, c, scope, []sessionEp{
		{name: "match", session: "s", min: 0, summary: "the automobile broke down on the pass"},
		{name: "reply", session: "s", min: 1, summary: "we waited two hours for help"},
	}, ids)
	awaitSearch(t, c)
	got, _ := retrieveParts(t, c, map[string]any{"query": "vehicle", "scopes": []string{scope}, "limit": 20})
	if h, ok := got[ids["match"]]; !ok || h.Parts.Text != 0 {
		t.Fatalf("the automobile: found %v, parts %+v; want it found by its vector alone", ok, h.Parts)
	}
	want := membrane.ContextScore([]membrane.SessionNeighbour{{T: 1, Hops: 1, After: true}})
	if h, ok := got[ids["reply"]]; !ok || h.Parts.Text != 0 || math.Abs(h.Parts.Context-want) > 1e-9 {
		t.Errorf("the reply: found %v, parts %+v; want context %v from the match before it", ok, h.Parts, want)
	}
}

// TestVectorsInBackground: with embedding in the background, a capture and
// an ingested event are written without waiting for the model; once the
// services close (the queue drained) both have their vectors, and the
// capture is found by its vector alone; a record above the embedding
// ceiling still has none, and a write after the close is written, with
// no vector.
func TestVectorsInBackground(t *testing.T) {
	scope := neo4jtest.Scope(t)
	var wiring *gqltest.Wiring
	c := vectorClientWith(t, new(atomic.Bool), func(w *gqltest.Wiring) {
		w.Options.EmbedInBackground = true
		wiring = w
	})
	w, broke, ev, secret := writeVectorRecords(c, scope)
	// A revision's new record is queued too: the one that supersedes a
	// fact.
	fact := func(object string) map[string]any {
		return map[string]any{"type": "SEMANTIC", "scope": scope, "payload": map[string]any{"semantic": map[string]any{
			"subject": "release", "predicate": "is on", "object": object,
			"evidence": []any{map[string]any{"sourceType": "episodic", "sourceId": ev}}}}}
	}
	var old struct{ CreateRecord struct{ ID string } }
	c.Do(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": fact("friday " + w)}, &old)
	var newer struct{ Supersede struct{ ID string } }
	c.Do(`mutation($o: ID!, $in: RecordInput!) { supersede(oldId: $o, newRecord: $in) { id } }`,
		map[string]any{"o": old.CreateRecord.ID, "in": fact("monday " + w)}, &newer)
	if err := wiring.Services.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	late := c.capture(map[string]any{"source": "s", "scope": scope, "summary": "written after the close " + w})
	awaitSearch(t, c)
	got := c.retrieve(map[string]any{"query": "vehicle", "scopes": []any{scope}})
	if !got.Retrieve.VectorUsed || len(got.Retrieve.Hits) == 0 || got.Retrieve.Hits[0].Record.ID != broke {
		t.Fatalf("vehicle: %+v, want the automobile found by its vector", got.Retrieve)
	}
	found := map[string]hitOut{}
	for _, x := range c.retrieve(map[string]any{"query": "automobile friday written " + w, "scopes": []any{scope}}).Retrieve.Hits {
		found[x.Record.ID] = x
	}
	for _, tc := range []struct {
		name   string
		id     string
		vector bool
	}{
		{"capture", broke, true},
		{"ingested event", ev, true},
		{"the record a supersede created", newer.Supersede.ID, true},
		{"above the embedding ceiling", secret, false},
		{"written after the close", late.CaptureMemory.Primary.ID, false},
	} {
		if x, ok := found[tc.id]; !ok || (x.Parts.Vector != nil) != tc.vector {
			t.Errorf("%s: found %v, parts %+v; want a vector: %v", tc.name, ok, x.Parts, tc.vector)
		}
	}
}

// TestVectorQueueOverflowCatchesUp: a bulk write larger than the vector
// queue gets every vector without waiting for the embed job's schedule:
// the records the full queue turned away are embedded by the embed job,
// which the writer runs once its queue has drained. Here the queue holds
// one record and the job has no schedule, so without that run most of the
// batch would never get its vector.
func TestVectorQueueOverflowCatchesUp(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := vectorClientWith(t, new(atomic.Bool), func(w *gqltest.Wiring) {
		runner, err := jobs.New(w.DB, membrane.DefaultPolicy(), jobs.Config{Timeout: time.Minute, LeaseTTL: time.Minute,
			Holder: "graph-test", Scopes: []string{scope}, Embedder: w.Options.Embedder,
			Consolidation: membrane.DefaultConsolidationOptions()}, slog.New(slog.DiscardHandler), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = runner.Stop(context.Background()) })
		w.Stores.Jobs = runner
		w.Options.EmbedInBackground, w.Options.VectorQueue = true, 1
	})
	neo4jtest.DeleteAtEnd(c.T, c.DB, scope)
	w := word()
	const n = 40
	in := make([]any, n)
	for i := range in {
		in[i] = map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{
			"timeline": []any{map[string]any{"t": "2026-01-02T03:04:05Z", "eventKind": "note", "ref": fmt.Sprint(i),
				"summary": fmt.Sprintf("automobile note %d %s", i, w)}}}}}
	}
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in, actor: "test") { id } }`, map[string]any{"in": in}, nil)
	awaitSearch(t, c)
	deadline := time.Now().Add(time.Minute)
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for ; ; <-poll.C {
		hits := c.retrieve(map[string]any{"query": w, "scopes": []any{scope}, "limit": 100}).Retrieve.Hits
		with := 0
		for _, h := range hits {
			if h.Parts.Vector != nil {
				with++
			}
		}
		if len(hits) == n && with == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records found, %d with a vector a minute after the write: want all %d", len(hits), n, with, n)
		}
	}
}
