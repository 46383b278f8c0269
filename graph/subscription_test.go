package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// withFeed gives a test server a change-feed hub of its own, ticking fast,
// that stops with the test.
func withFeed(t testing.TB) (func(*wiring), **feed.Hub) {
	var hub *feed.Hub
	return func(w *wiring) {
		hub = feed.NewHub(w.DB, feed.Config{Interval: 20 * time.Millisecond, Holder: t.Name()}, nil)
		w.Stores.Feed, w.Feed = w.DB, hub
		// Stopped and waited for, so that no tick reaches the database
		// after the test (another test may count transactions).
		stop := hub.Go()
		t.Cleanup(func() {
			hub.Close()
			stop()
		})
	}, &hub
}

// stream is one open subscription over SSE.
type stream struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan gqlResponse
	status int
}

// subscribeSSE opens a subscription over SSE as c's principal.
func (c *client) subscribeSSE(t *testing.T, url, query string, vars map[string]any) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &stream{t: t, cancel: cancel, events: make(chan gqlResponse, 100), status: resp.StatusCode}
	t.Cleanup(cancel)
	go func() {
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
				if event == "complete" {
					return
				}
			case strings.HasPrefix(line, "data: ") && event == "next":
				// Undecodable data stays an empty response, which fails
				// the test that reads it.
				var r gqlResponse
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r)
				r.body = []byte(strings.TrimPrefix(line, "data: "))
				select {
				case s.events <- r:
				case <-ctx.Done(): // the test stopped reading
					return
				}
			}
		}
	}()
	return s
}

// next returns the next event, failing the test after 10 s.
func (s *stream) next() gqlResponse {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("subscription ended")
		}
		return e
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10s")
	}
	return gqlResponse{}
}

// ended reports whether the stream completes within 10 s.
func (s *stream) ended() bool {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

type change struct {
	Cursor   string
	RecordID string
	Action   string
	Redacted bool
	Record   *struct {
		ID      string
		Payload *struct{ Subject string }
	}
}

func decodeChange(t *testing.T, r gqlResponse) change {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("event errors: %+v", r.Errors)
	}
	var out struct{ RecordChanged change }
	if err := json.Unmarshal(r.Data, &out); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	return out.RecordChanged
}

const recordChangedQ = `subscription($f: ChangeFilter, $after: String) {
  recordChanged(filter: $f, after: $after) {
    cursor recordId action redacted
    record { id payload { ... on SemanticPayload { subject } } }
  }
}`

func changeCursor(t *testing.T, c *client) string {
	t.Helper()
	var out struct{ ChangeCursor string }
	c.do(`{ changeCursor }`, nil, &out)
	return out.ChangeCursor
}

func TestRecordChangedOverSSE(t *testing.T) {
	setup, _ := withFeed(t)
	c := newClientWith(t, setup)
	scope := neo4jtest.Scope(t)
	s := c.subscribeSSE(t, c.url, recordChangedQ, map[string]any{"f": map[string]any{"scopes": []any{scope}}, "after": changeCursor(t, c)})
	if s.status != http.StatusOK {
		t.Fatalf("status %d", s.status)
	}
	first := c.create(scope, "SEMANTIC", fact("alpha"), nil)
	e := decodeChange(t, s.next())
	if e.RecordID != first || e.Action != "CREATE" || e.Record == nil || e.Record.Payload.Subject != "alpha" {
		t.Fatalf("first event = %+v, want CREATE of %s", e, first)
	}
	c.do(`mutation($id: ID!) { reinforce(id: $id, actor: "a") { id } }`, map[string]any{"id": first}, nil)
	var sup struct{ Supersede struct{ ID string } }
	c.do(supersedeQ, map[string]any{"old": first, "in": factInput(scope, "beta")}, &sup)
	want := []struct{ id, action string }{{first, "REINFORCE"}}
	got := []struct{ id, action string }{}
	got = append(got, pick(decodeChange(t, s.next())))
	// supersede writes two entries (the new record's and the old one's) in
	// one transaction; their order within it is by time and id.
	two := map[string]string{}
	for range 2 {
		e := decodeChange(t, s.next())
		two[e.RecordID] = e.Action
	}
	if got[0] != want[0] {
		t.Fatalf("got %v, want %v", got, want)
	}
	if two[first] != "SUPERSEDE" || two[sup.Supersede.ID] == "" {
		t.Fatalf("supersede events = %v (old %s new %s)", two, first, sup.Supersede.ID)
	}
}

func pick(e change) struct{ id, action string } {
	return struct{ id, action string }{e.RecordID, e.Action}
}

// TestResumeAcrossReplicas: a subscriber reads two events from one
// replica, drops, and resumes on another replica from the cursor of the
// last event it got: it receives exactly the rest, each once, in order.
func TestResumeAcrossReplicas(t *testing.T) {
	setupA, _ := withFeed(t)
	c := newClientWith(t, setupA)
	setupB, _ := withFeed(t)
	replicaB := c.serve(setupB)
	scope := neo4jtest.Scope(t)
	from := changeCursor(t, c)

	var ids []string
	for i := range 5 {
		ids = append(ids, c.create(scope, "SEMANTIC", fact(fmt.Sprintf("s%d", i)), nil))
	}
	f := map[string]any{"scopes": []any{scope}}
	a := c.subscribeSSE(t, c.url, recordChangedQ, map[string]any{"f": f, "after": from})
	e0, e1 := decodeChange(t, a.next()), decodeChange(t, a.next())
	if e0.RecordID != ids[0] || e1.RecordID != ids[1] {
		t.Fatalf("first two events %s %s, want %s %s", e0.RecordID, e1.RecordID, ids[0], ids[1])
	}
	a.cancel()

	b := c.subscribeSSE(t, replicaB, recordChangedQ, map[string]any{"f": f, "after": e1.Cursor})
	for _, want := range ids[2:] {
		if e := decodeChange(t, b.next()); e.RecordID != want || e.Action != "CREATE" {
			t.Fatalf("resumed event %+v, want CREATE of %s", e, want)
		}
	}
	// Nothing twice: the next event is a new change, not a replay.
	late := c.create(scope, "SEMANTIC", fact("late"), nil)
	if e := decodeChange(t, b.next()); e.RecordID != late {
		t.Fatalf("after the backlog got %s, want the new record %s", e.RecordID, late)
	}
}

// TestSubscriptionGating: a subscriber sees changes of records at or below
// its ceiling in full, one level above redacted (recordChanged only), and
// nothing of records two levels above or outside its scopes.
func TestSubscriptionGating(t *testing.T) {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
	reader := membrane.Principal{Actor: "reader-" + membrane.NewID(), Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	setup, _ := withFeed(t)
	c := newClientWith(t, setup, reader)
	r := c.as(reader.Actor)
	from := changeCursor(t, c)

	low := c.create(scope, "SEMANTIC", fact("low-fact"), map[string]any{"sensitivity": "LOW"})
	medium := c.create(scope, "SEMANTIC", fact("medium-fact"), map[string]any{"sensitivity": "MEDIUM"})
	c.create(scope, "SEMANTIC", fact("high-fact"), map[string]any{"sensitivity": "HIGH"})
	c.create(other, "SEMANTIC", fact("elsewhere"), map[string]any{"sensitivity": "PUBLIC"})
	marker := c.create(scope, "SEMANTIC", fact("marker"), map[string]any{"sensitivity": "PUBLIC"})

	t.Run("recordChanged", func(t *testing.T) {
		s := r.subscribeSSE(t, c.url, recordChangedQ, map[string]any{"after": from,
			"f": map[string]any{"scopes": []any{scope, other}}})
		got := map[string]change{}
		for {
			e := decodeChange(t, s.next())
			got[e.RecordID] = e
			if e.RecordID == marker {
				break
			}
		}
		if len(got) != 3 {
			t.Fatalf("events for %d records, want low, medium and the marker: %+v", len(got), got)
		}
		if e := got[low]; e.Redacted || e.Record == nil || e.Record.Payload == nil || e.Record.Payload.Subject != "low-fact" {
			t.Errorf("low record event %+v, want in full", e)
		}
		if e := got[medium]; !e.Redacted || e.Record == nil || e.Record.Payload != nil {
			t.Errorf("medium record event %+v, want redacted without payload", e)
		}
	})
	t.Run("auditAppended", func(t *testing.T) {
		s := r.subscribeSSE(t, c.url, `subscription($after: String) { auditAppended(after: $after) { cursor entry { recordId action actor rationale } } }`,
			map[string]any{"after": from})
		var seen []string
		for {
			ev := s.next()
			var out struct {
				AuditAppended struct {
					Entry struct{ RecordID, Actor string }
				}
			}
			if err := json.Unmarshal(ev.Data, &out); err != nil || len(ev.Errors) > 0 {
				t.Fatalf("event %s %+v: %v", ev.Data, ev.Errors, err)
			}
			id := out.AuditAppended.Entry.RecordID
			seen = append(seen, id)
			if id == marker {
				break
			}
		}
		// Other tests' public unscoped records may show up too; ours must be
		// exactly low then marker.
		var ours []string
		for _, id := range seen {
			if id == low || id == medium || id == marker {
				ours = append(ours, id)
			}
		}
		if fmt.Sprint(ours) != fmt.Sprint([]string{low, marker}) {
			t.Fatalf("audit events of our records %v, want [low marker] = %v", ours, []string{low, marker})
		}
	})
}

func TestSubscriptionBadInput(t *testing.T) {
	setup, _ := withFeed(t)
	c := newClientWith(t, setup)
	many := make([]any, membrane.MaxFilterValues+1)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	for _, tc := range []struct {
		name string
		vars map[string]any
	}{
		{"not a cursor", map[string]any{"after": "bm90LWEtY3Vyc29y"}},
		{"record cursor", map[string]any{"after": membrane.Cursor{Key: "x", ID: "y", Field: "createdAt"}.Encode()}},
		{"too many ids", map[string]any{"f": map[string]any{"ids": many}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := c.subscribeSSE(t, c.url, recordChangedQ, tc.vars)
			e := s.next()
			if len(e.Errors) == 0 || e.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
				t.Fatalf("got %s %+v, want BAD_USER_INPUT", e.Data, e.Errors)
			}
		})
	}
	t.Run("unauthenticated", func(t *testing.T) {
		d := *c
		d.key = "wrong"
		s := d.subscribeSSE(t, c.url, recordChangedQ, nil)
		if s.status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", s.status)
		}
	})
}

// TestSubscriptionsEndOnClose: closing the hub (server shutdown) completes
// every open subscription.
func TestSubscriptionsEndOnClose(t *testing.T) {
	setup, hub := withFeed(t)
	c := newClientWith(t, setup)
	scope := neo4jtest.Scope(t)
	s := c.subscribeSSE(t, c.url, recordChangedQ, map[string]any{"after": changeCursor(t, c), "f": map[string]any{"scopes": []any{scope}}})
	c.create(scope, "SEMANTIC", fact("x"), nil) // proves the stream is live
	s.next()
	if n := (*hub).Active(); n != 1 {
		t.Fatalf("active subscriptions = %d, want 1", n)
	}
	(*hub).Close()
	if !s.ended() {
		t.Fatal("subscription did not complete after Close")
	}
}
