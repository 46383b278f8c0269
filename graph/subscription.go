package graph

import (
	"context"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// follow starts a change-feed subscription with the request's trust.
func (r *subscriptionResolver) follow(ctx context.Context, f *ChangeFilter, after *string, withRecords bool) (<-chan *membrane.Event, error) {
	if r.Feed == nil {
		return nil, membrane.ErrNoFeed
	}
	s := feed.Subscription{WithRecords: withRecords}
	if after != nil {
		seq, err := membrane.DecodeEventCursor(*after)
		if err != nil {
			return nil, err
		}
		s.After = &seq
	}
	if f != nil {
		s.Filter = membrane.ChangeFilter{RecordIDs: f.Ids, Types: f.Types, Scopes: f.Scopes, Actions: f.Actions, Actors: f.Actors}
	}
	return r.Feed.Start(ctx, s)
}

// relay turns feed events into the subscription's type until the feed
// ends (the subscriber left or the server is shutting down).
func relay[T any](ctx context.Context, events <-chan *membrane.Event, conv func(*membrane.Event) T) <-chan T {
	out := make(chan T)
	safego.Go("subscription relay", func() {
		defer close(out)
		for e := range events {
			select {
			case out <- conv(e):
			case <-ctx.Done():
				// Drain so the feed's goroutine, also watching ctx, ends.
				for range events {
				}
				return
			}
		}
	})
	return out
}
