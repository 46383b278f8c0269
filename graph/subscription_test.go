package graph_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestResumeAcrossReplicas: a subscriber reads two events from one
// replica, drops, and resumes on another replica from the cursor of the
// last event it got: it receives exactly the rest, each once, in order.
func TestResumeAcrossReplicas(t *testing.T) {
	setupA, _ := gqltest.WithFeed(t)
	c := newClientWith(t, setupA)
	setupB, _ := gqltest.WithFeed(t)
	replicaB := c.Serve(setupB)
	scope := neo4jtest.Scope(t)
	from := c.ChangeCursor()

	var ids []string
	for i := range 5 {
		ids = append(ids, c.Create(scope, "SEMANTIC", gqltest.Fact(fmt.Sprintf("s%d", i)), nil))
	}
	f := map[string]any{"scopes": []any{scope}}
	a := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, map[string]any{"f": f, "after": from})
	e0, e1 := gqltest.DecodeChange(t, a.Next()), gqltest.DecodeChange(t, a.Next())
	if e0.RecordID != ids[0] || e1.RecordID != ids[1] {
		t.Fatalf("first two events %s %s, want %s %s", e0.RecordID, e1.RecordID, ids[0], ids[1])
	}
	a.Close()

	b := c.SubscribeSSE(t, replicaB, gqltest.RecordChangedQuery, map[string]any{"f": f, "after": e1.Cursor})
	for _, want := range ids[2:] {
		if e := gqltest.DecodeChange(t, b.Next()); e.RecordID != want || e.Action != "CREATE" {
			t.Fatalf("resumed event %+v, want CREATE of %s", e, want)
		}
	}
	// Nothing twice: the next event is a new change, not a replay.
	late := c.Create(scope, "SEMANTIC", gqltest.Fact("late"), nil)
	if e := gqltest.DecodeChange(t, b.Next()); e.RecordID != late {
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
	setup, _ := gqltest.WithFeed(t)
	c := newClientWith(t, setup, reader)
	r := c.as(reader.Actor)
	from := c.ChangeCursor()

	low := c.Create(scope, "SEMANTIC", gqltest.Fact("low-fact"), map[string]any{"sensitivity": "LOW"})
	medium := c.Create(scope, "SEMANTIC", gqltest.Fact("medium-fact"), map[string]any{"sensitivity": "MEDIUM"})
	c.Create(scope, "SEMANTIC", gqltest.Fact("high-fact"), map[string]any{"sensitivity": "HIGH"})
	c.Create(other, "SEMANTIC", gqltest.Fact("elsewhere"), map[string]any{"sensitivity": "PUBLIC"})
	marker := c.Create(scope, "SEMANTIC", gqltest.Fact("marker"), map[string]any{"sensitivity": "PUBLIC"})

	t.Run("recordChanged", func(t *testing.T) {
		s := r.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, map[string]any{"after": from,
			"f": map[string]any{"scopes": []any{scope, other}}})
		got := map[string]gqltest.Change{}
		for {
			e := gqltest.DecodeChange(t, s.Next())
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
		s := r.SubscribeSSE(t, c.URL, `subscription($after: String) { auditAppended(after: $after) { cursor entry { recordId action actor rationale } } }`,
			map[string]any{"after": from})
		var seen []string
		for {
			ev := s.Next()
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
	setup, _ := gqltest.WithFeed(t)
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
			s := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, tc.vars)
			e := s.Next()
			if len(e.Errors) == 0 || e.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
				t.Fatalf("got %s %+v, want BAD_USER_INPUT", e.Data, e.Errors)
			}
		})
	}
	t.Run("unauthenticated", func(t *testing.T) {
		d := c.WithKey("wrong")
		s := d.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, nil)
		if s.Status != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", s.Status)
		}
	})
}

// TestSubscriptionsEndOnClose: closing the hub (server shutdown) completes
// every open subscription.
func TestSubscriptionsEndOnClose(t *testing.T) {
	setup, hub := gqltest.WithFeed(t)
	c := newClientWith(t, setup)
	scope := neo4jtest.Scope(t)
	s := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, map[string]any{"after": c.ChangeCursor(), "f": map[string]any{"scopes": []any{scope}}})
	c.Create(scope, "SEMANTIC", gqltest.Fact("x"), nil) // proves the stream is live
	s.Next()
	if n := (*hub).Active(); n != 1 {
		t.Fatalf("active subscriptions = %d, want 1", n)
	}
	(*hub).Close()
	if !s.Ended() {
		t.Fatal("subscription did not complete after Close")
	}
}
