package graph_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestSubscriptionLimitOverSSE: the subscription past its principal's
// limit is refused with extensions.code RATE_LIMITED; ending one frees a
// place for the next.
func TestSubscriptionLimitOverSSE(t *testing.T) {
	var hub *feed.Hub
	c := newClientWith(t, func(w *gqltest.Wiring) {
		hub = feed.NewHub(w.DB, feed.Config{Interval: 20 * time.Millisecond, Holder: t.Name(),
			PerPrincipal: func(membrane.Principal) int { return 2 }}, nil)
		w.Stores.Feed, w.Feed = w.DB, hub
		stop := hub.Go()
		t.Cleanup(func() {
			hub.Close()
			stop()
		})
	})
	scope := neo4jtest.Scope(t)
	vars := func() map[string]any {
		return map[string]any{"f": map[string]any{"scopes": []any{scope}}, "after": c.ChangeCursor()}
	}
	// active waits, with a deadline, until n subscriptions are admitted:
	// a stream's headers come before its operation is dispatched (and
	// counted), so without it the third could be admitted before the
	// second.
	active := func(n int) {
		t.Helper()
		poll := time.NewTicker(10 * time.Millisecond)
		defer poll.Stop()
		deadline := time.After(10 * time.Second)
		for hub.Active() != n {
			select {
			case <-poll.C:
			case <-deadline:
				t.Fatalf("%d subscriptions active after 10s, want %d", hub.Active(), n)
			}
		}
	}
	first := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, vars())
	active(1)
	second := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, vars())
	active(2)
	third := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, vars())
	if third.Status != http.StatusOK {
		t.Fatalf("status %d", third.Status)
	}
	if e := third.Next(); len(e.Errors) == 0 || e.Errors[0].Extensions["code"] != "RATE_LIMITED" {
		t.Fatalf("third subscription got %s %+v, want RATE_LIMITED", e.Data, e.Errors)
	}
	id := c.Create(scope, "SEMANTIC", gqltest.Fact("one"), nil)
	for _, s := range []*gqltest.Stream{first, second} {
		if e := gqltest.DecodeChange(t, s.Next()); e.RecordID != id {
			t.Fatalf("got %+v, want the create of %s", e, id)
		}
	}

	first.Close()
	// The server hears of the hang-up when it next reads or writes.
	active(1)
	fourth := c.SubscribeSSE(t, c.URL, gqltest.RecordChangedQuery, vars())
	id = c.Create(scope, "SEMANTIC", gqltest.Fact("two"), nil)
	for _, s := range []*gqltest.Stream{second, fourth} {
		if e := gqltest.DecodeChange(t, s.Next()); e.RecordID != id {
			t.Fatalf("got %+v, want the create of %s", e, id)
		}
	}
}
