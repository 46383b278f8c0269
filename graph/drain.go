package graph

import "context"

type drainingKey struct{}

// WithDraining returns ctx carrying draining, a channel closed when the
// server starts shutting down. The server puts it in the base context of
// every connection (http.Server.BaseContext).
func WithDraining(ctx context.Context, draining <-chan struct{}) context.Context {
	return context.WithValue(ctx, drainingKey{}, draining)
}

// Draining returns a channel closed when the server starts shutting down;
// nil (never ready) when ctx has none. Long-lived responses (subscriptions
// over WebSocket or server-sent events) must end when it is closed:
// http.Server.Shutdown does not wait for hijacked connections and waits
// for streaming ones until its timeout, while their request contexts are
// only canceled once the process is gone.
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainingKey{}).(<-chan struct{})
	return ch
}

// UntilDraining returns a context that ends with ctx or when the server
// starts shutting down, whichever comes first: a subscription resolver
// that derives its work from it ends cleanly (its channel closes and the
// client gets "complete") at shutdown.
func UntilDraining(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	draining := Draining(ctx)
	if draining == nil {
		return ctx, cancel
	}
	// The goroutine ends with the returned context, whichever ends it.
	go func() {
		select {
		case <-draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
