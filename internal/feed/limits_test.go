package feed_test

import (
	"context"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestSubscriptionLimits: a principal over its limit of open subscriptions
// (by role), or any subscriber once the hub is at its limit, is refused
// with RATE_LIMITED before the store is asked anything; a subscription
// that ends frees its place.
func TestSubscriptionLimits(t *testing.T) {
	store := &countingEvents{EventStore: neo4jtest.DB(t)}
	hub := feed.NewHub(store, feed.Config{Interval: time.Hour, Holder: t.Name(), MaxSubscriptions: 4,
		PerPrincipal: func(p membrane.Principal) int {
			return map[membrane.Role]int{membrane.RoleWriter: 2, membrane.RoleAdmin: 3}[p.Role]
		}}, nil)
	runHub(t, hub)
	principals := map[string]membrane.Principal{
		"a":     {Actor: "a", Role: membrane.RoleWriter},
		"b":     {Actor: "b", Role: membrane.RoleWriter},
		"admin": {Actor: "admin", Role: membrane.RoleAdmin},
	}
	open := map[string][]context.CancelFunc{}
	var channels = map[string][]<-chan *membrane.Event{}
	steps := []struct {
		who   string
		close bool   // end one of who's subscriptions instead
		want  string // the error code, "" for accepted
	}{
		{who: "a"},
		{who: "a"},
		{who: "a", want: membrane.ERATELIMITED}, // a's limit
		{who: "b"},                              // b has places of its own
		{who: "admin"},                          // the hub's 4th
		{who: "admin", want: membrane.ERATELIMITED}, // the hub's limit, below the admin's
		{who: "a", close: true},
		{who: "admin"}, // the place a freed
		{who: "b", want: membrane.ERATELIMITED},
		{who: "a", want: membrane.ERATELIMITED},
	}
	for i, s := range steps {
		if s.close {
			open[s.who][0]()
			for range channels[s.who][0] { // ends once its place is free
			}
			open[s.who], channels[s.who] = open[s.who][1:], channels[s.who][1:]
			continue
		}
		ctx, cancel := context.WithCancel(membrane.NewContextWithTrust(t.Context(), membrane.Trust{Principal: principals[s.who]}))
		t.Cleanup(cancel)
		before := store.heads.Load() + store.reads.Load()
		ch, err := hub.Start(ctx, feed.Subscription{})
		if code := membrane.ErrorCode(err); code != s.want {
			t.Fatalf("step %d (%s): error %v, want code %q", i, s.who, err, s.want)
		}
		if err != nil {
			if n := store.heads.Load() + store.reads.Load() - before; n != 0 {
				t.Fatalf("step %d: a refused subscription asked the store %d times", i, n)
			}
			continue
		}
		open[s.who], channels[s.who] = append(open[s.who], cancel), append(channels[s.who], ch)
	}
	if n := hub.Active(); n != 4 {
		t.Fatalf("%d subscriptions active, want 4", n)
	}
}
