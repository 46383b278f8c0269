package feed_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

func sysCtx(t testing.TB) context.Context {
	return membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("feed-test"))
}

// createFacts writes n facts in scope in one transaction and returns their
// ids.
func createFacts(t testing.TB, db *neo4j.DB, scope string, n int) []string {
	t.Helper()
	p := membrane.DefaultPolicy()
	batch := make([]*membrane.Ingested, n)
	ids := make([]string, n)
	for i := range batch {
		r, err := p.BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope,
			Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: fmt.Sprint("s", i), Predicate: "is", Object: "x",
				Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "t"}}}}}, time.Now())
		if err != nil {
			t.Error(err)
			return nil
		}
		batch[i] = &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", time.Now())}
		ids[i] = r.ID
	}
	if _, err := db.CreateRecords(sysCtx(t), nil, batch); err != nil {
		t.Error(err)
	}
	return ids
}

// runHub runs hub until the test ends and waits for its loop to return,
// so that no tick of it reaches the database after the test.
func runHub(t testing.TB, hub *feed.Hub) {
	stop := hub.Go()
	t.Cleanup(func() {
		hub.Close()
		stop()
	})
}

// seqsUpTo returns the sequence numbers of scope's entries after from and
// up to head.
func seqsUpTo(t *testing.T, db *neo4j.DB, scope string, from, head int64) []int64 {
	t.Helper()
	var out []int64
	after := from
	for after < head {
		b, err := db.Events(sysCtx(t), membrane.EventQuery{After: after, UpTo: head, Limit: 1000,
			Filter: membrane.ChangeFilter{Scopes: []string{scope}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range b.Events {
			out = append(out, e.Seq)
		}
		after = b.Next
	}
	return out
}

// TestSequenceFollowsCommits: with writers committing concurrently and two
// sequencers (two replicas) racing, every entry gets exactly one number,
// and numbers follow commit order: once a reader has seen the head at n
// and the entries up to n, no entry ever appears at or below n later.
// That is what makes a cursor safe to resume from.
func TestSequenceFollowsCommits(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	hubs := []*feed.Hub{
		feed.NewHub(db, feed.Config{Batch: 7, Holder: "replica-a"}, nil),
		feed.NewHub(db, feed.Config{Batch: 7, Holder: "replica-b"}, nil),
	}
	const writers, minBatches, perBatch, minObservations = 6, 8, 5, 5
	start, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithCancel(t.Context())
	var tickers sync.WaitGroup
	for _, h := range hubs {
		tickers.Go(func() {
			for ctx.Err() == nil {
				if err := h.Tick(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
					return
				}
			}
		})
	}
	type observation struct {
		head  int64
		count int
	}
	var (
		mu           sync.Mutex
		observations []observation
		written      atomic.Int64
	)
	observed := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(observations)
	}
	var observer sync.WaitGroup
	observer.Go(func() {
		for ctx.Err() == nil {
			h, err := db.FeedHead(ctx)
			if err != nil {
				return
			}
			o := observation{h.Seq, len(seqsUpTo(t, db, scope, start.Seq, h.Seq))}
			mu.Lock()
			observations = append(observations, o)
			mu.Unlock()
		}
	})
	// Writers go on until the observer has looked several times while they
	// write (however slow the machine), within a bound.
	var ws sync.WaitGroup
	for range writers {
		ws.Go(func() {
			for i := 0; i < minBatches || observed() < minObservations && i < 50*minBatches; i++ {
				createFacts(t, db, scope, perBatch)
				written.Add(perBatch)
			}
		})
	}
	ws.Wait()
	// Let the sequencers number what is left of this test's entries (other
	// packages may keep writing meanwhile), then stop everything.
	for deadline := time.Now().Add(time.Minute); ; {
		h, err := db.FeedHead(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(seqsUpTo(t, db, scope, start.Seq, h.Seq)) == int(written.Load()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("this test's entries were not all numbered within a minute")
		}
		if err := hubs[0].Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	tickers.Wait()
	observer.Wait()

	h, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	all := seqsUpTo(t, db, scope, start.Seq, h.Seq)
	if want := int(written.Load()); len(all) != want {
		t.Fatalf("%d entries numbered, want %d", len(all), want)
	}
	seen := map[int64]bool{}
	for i, s := range all {
		if seen[s] || i > 0 && s <= all[i-1] {
			t.Fatalf("sequence numbers not unique and increasing at %d: %v", i, all[max(0, i-3):min(len(all), i+3)])
		}
		seen[s] = true
	}
	if len(observations) < minObservations {
		t.Fatalf("only %d observations; the test did not exercise concurrency", len(observations))
	}
	for _, o := range observations {
		n := 0
		for _, s := range all {
			if s <= o.head {
				n++
			}
		}
		if n != o.count {
			t.Fatalf("a reader saw %d entries up to head %d; now there are %d: an entry appeared behind a cursor", o.count, o.head, n)
		}
	}
}

// TestFollowDelivers: a subscription started from a cursor gets every
// later entry once, in order, across batch boundaries, and only those its
// filter selects.
func TestFollowDelivers(t *testing.T) {
	db := neo4jtest.DB(t)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	hub := feed.NewHub(db, feed.Config{Interval: 10 * time.Millisecond, Batch: 4}, nil)
	runHub(t, hub)
	start, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	after := start.Seq
	ctx, cancel := context.WithCancel(sysCtx(t))
	defer cancel()
	events, err := hub.Start(ctx, feed.Subscription{After: &after, Filter: membrane.ChangeFilter{Scopes: []string{scope}}})
	if err != nil {
		t.Fatal(err)
	}
	createFacts(t, db, other, 3)
	want := createFacts(t, db, scope, 10)
	createFacts(t, db, other, 3)
	want = append(want, createFacts(t, db, scope, 1)...)
	ours := map[string]bool{}
	for _, id := range want {
		ours[id] = true
	}
	var got []int64
	for len(got) < len(want) {
		select {
		case e := <-events:
			if e.Entry.Action != membrane.AuditCreate || !ours[e.Entry.RecordID] {
				t.Fatalf("event %+v, want a create of one of the scope's records", e.Entry)
			}
			delete(ours, e.Entry.RecordID) // each once
			got = append(got, e.Seq)
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d of %d events", len(got), len(want))
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("events out of order: %v", got)
		}
	}
	cancel()
	for range events { // the channel closes once the subscriber leaves
	}
	if n := hub.Active(); n != 0 {
		t.Fatalf("%d subscriptions still active after cancel", n)
	}
}
