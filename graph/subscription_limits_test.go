package graph_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestSubscriptionLimitOverSSE: the subscription past its principal's
// limit is refused with extensions.code RATE_LIMITED; ending one frees a
// place for the next.
func TestSubscriptionLimitOverSSE(t *testing.T) {
	var hub *feed.Hub
	c := newClientWith(t, func(w *wiring) {
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
		return map[string]any{"f": map[string]any{"scopes": []any{scope}}, "after": changeCursor(t, c)}
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
	first := c.subscribeSSE(t, c.url, recordChangedQ, vars())
	active(1)
	second := c.subscribeSSE(t, c.url, recordChangedQ, vars())
	active(2)
	third := c.subscribeSSE(t, c.url, recordChangedQ, vars())
	if third.status != http.StatusOK {
		t.Fatalf("status %d", third.status)
	}
	if e := third.next(); len(e.Errors) == 0 || e.Errors[0].Extensions["code"] != "RATE_LIMITED" {
		t.Fatalf("third subscription got %s %+v, want RATE_LIMITED", e.Data, e.Errors)
	}
	id := c.create(scope, "SEMANTIC", fact("one"), nil)
	for _, s := range []*stream{first, second} {
		if e := decodeChange(t, s.next()); e.RecordID != id {
			t.Fatalf("got %+v, want the create of %s", e, id)
		}
	}

	first.cancel()
	// The server hears of the hang-up when it next reads or writes.
	active(1)
	fourth := c.subscribeSSE(t, c.url, recordChangedQ, vars())
	id = c.create(scope, "SEMANTIC", fact("two"), nil)
	for _, s := range []*stream{second, fourth} {
		if e := decodeChange(t, s.next()); e.RecordID != id {
			t.Fatalf("got %+v, want the create of %s", e, id)
		}
	}
}
