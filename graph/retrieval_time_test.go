package graph_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/neo4jtest"
)

// timedEpisode is one episode of a session, said at a time.
type timedEpisode struct {
	session, summary string
	at               time.Time
}

// writeTimedEpisodes writes the episodes into scope with ingestBatch, waits
// until they are searchable and returns their ids in order.
func writeTimedEpisodes(t *testing.T, c *client, scope string, eps ...timedEpisode) []string {
	t.Helper()
	in := make([]any, len(eps))
	for i, e := range eps {
		in[i] = map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{
			"sessionId": e.session,
			"timeline":  []any{map[string]any{"t": e.at.Format(time.RFC3339Nano), "eventKind": "user_input", "ref": e.session, "summary": e.summary}}}}}
	}
	var out struct{ IngestBatch []struct{ ID string } }
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": in}, &out)
	awaitSearch(t, c)
	ids := make([]string, len(out.IngestBatch))
	for i, r := range out.IngestBatch {
		ids[i] = r.ID
	}
	return ids
}

// TestRetrieveTimeWindow: a query that names a time ranks the records of
// that time first and says which window it read; the same query without
// the time, or with an impossible date, ranks by text alone and names no
// window (never an error).
func TestRetrieveTimeWindow(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	now := time.Now().UTC()
	ids := writeTimedEpisodes(t, c, scope,
		timedEpisode{"s-old", "the plumber looked at the boiler and the boiler pressure, a boiler valve is worn", now.AddDate(0, 0, -20)},
		timedEpisode{"s-recent", "the plumber came about the boiler", now.AddDate(0, 0, -3)})
	old, recent := ids[0], ids[1]

	type result struct {
		Retrieve struct {
			Hits []struct {
				Record struct{ ID string }
				Parts  struct{ Time, Redundancy float64 }
			}
			TimeWindow *struct {
				From, To time.Time
				Phrase   string
			}
		}
	}
	ask := func(query string) result {
		var r result
		c.Do(`query($q: String, $s: [String!]) { retrieve(input: {query: $q, scopes: $s, memoryTypes: [EPISODIC]}) {
			hits { record { id } parts { time redundancy } } timeWindow { from to phrase } } }`,
			map[string]any{"q": query, "s": []string{scope}}, &r)
		return r
	}

	r := ask("what did the plumber say about the boiler 3 days ago")
	w := r.Retrieve.TimeWindow
	if w == nil || w.Phrase != "3 days ago" || w.From.After(now.AddDate(0, 0, -3)) || !w.To.After(now.AddDate(0, 0, -3)) {
		t.Fatalf("timeWindow = %+v, want the day 3 days ago", w)
	}
	if len(r.Retrieve.Hits) != 2 || r.Retrieve.Hits[0].Record.ID != recent || r.Retrieve.Hits[0].Parts.Time != 1 || r.Retrieve.Hits[1].Parts.Time >= 1 {
		t.Fatalf("hits %+v, want the recent visit first with time 1", r.Retrieve.Hits)
	}
	for _, q := range []string{"what did the plumber say about the boiler", "the plumber and the boiler on the 32nd of Smarch"} {
		r := ask(q)
		if r.Retrieve.TimeWindow != nil {
			t.Errorf("%q: timeWindow %+v, want none", q, r.Retrieve.TimeWindow)
		}
		if len(r.Retrieve.Hits) != 2 || r.Retrieve.Hits[0].Record.ID != old || r.Retrieve.Hits[0].Parts.Time != 0 {
			t.Errorf("%q: hits %+v, want the better text match first, no time part", q, r.Retrieve.Hits)
		}
	}
}

// TestRetrieveTimeOrder: a query asking for the latest of something ranks
// the later of two equally good answers first, one asking for the first
// ranks the earlier first, and parts.order says what that added; a query
// asking for neither adds nothing.
func TestRetrieveTimeOrder(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	now := time.Now().UTC()
	// The same words: the two match alike whatever else the shared index
	// holds, and only their times tell them apart.
	ids := writeTimedEpisodes(t, c, scope,
		timedEpisode{"s-1", "the chapter three deadline is set", now.AddDate(0, 0, -40)},
		timedEpisode{"s-2", "the chapter three deadline is set", now.AddDate(0, 0, -10)})
	first, second := ids[0], ids[1]

	type hit struct {
		Record struct{ ID string }
		Parts  struct{ Order float64 }
	}
	ask := func(query string) []hit {
		var r struct{ Retrieve struct{ Hits []hit } }
		c.Do(`query($q: String, $s: [String!]) { retrieve(input: {query: $q, scopes: $s, memoryTypes: [EPISODIC]}) {
			hits { record { id } parts { order } } } }`, map[string]any{"q": query, "s": []string{scope}}, &r)
		return r.Retrieve.Hits
	}
	tests := []struct {
		query string
		want  string
		order bool
	}{
		{"what is the latest chapter three deadline", second, true},
		{"what was the chapter three deadline originally", first, true},
		// Ordinals: "first" and "last" after a determiner or a subject.
		{"what was the very first chapter three deadline", first, true},
		{"when we last set the chapter three deadline", second, true},
	}
	for _, tt := range tests {
		hits := ask(tt.query)
		if len(hits) != 2 || hits[0].Record.ID != tt.want || hits[0].Parts.Order <= 0 || hits[1].Parts.Order != 0 {
			t.Errorf("%q: hits %+v, want %s first with an order part, the other with none", tt.query, hits, tt.want)
		}
	}
	for _, h := range ask("what is the chapter three deadline") {
		if h.Parts.Order != 0 {
			t.Errorf("a query asking for no order: %s has order part %v", h.Record.ID, h.Parts.Order)
		}
	}
}
