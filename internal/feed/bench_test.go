package feed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// BenchmarkWriteWithSubscribers measures one write (a fact created in its
// own transaction) while subscriptions follow the feed, as on a server:
// the hub ticks every 20 ms and every subscriber takes its events at
// once. reads/op is the feed's read transactions per write.
func BenchmarkWriteWithSubscribers(b *testing.B) {
	for _, n := range []int{0, 100, 400} {
		b.Run(fmt.Sprint(n, "subscribers"), func(b *testing.B) {
			db := neo4jtest.DB(b)
			store := &countingEvents{EventStore: db}
			scope := neo4jtest.Scope(b)
			hub := feed.NewHub(store, feed.Config{Interval: 20 * time.Millisecond, Holder: b.Name()}, nil)
			runHub(b, hub)
			ctx, cancel := context.WithCancel(sysCtx(b))
			defer cancel()
			for range n {
				events, err := hub.Start(ctx, feed.Subscription{Filter: membrane.ChangeFilter{Scopes: []string{scope}}, WithRecords: true})
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					for range events {
					}
				}()
			}
			before := store.reads.Load()
			b.ResetTimer()
			for range b.N {
				createFacts(b, db, scope, 1)
			}
			b.StopTimer()
			b.ReportMetric(float64(store.reads.Load()-before)/float64(b.N), "reads/op")
		})
	}
}
