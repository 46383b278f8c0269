package feed_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// countingEvents is the real store, counting the feed reads that go
// through it.
type countingEvents struct {
	membrane.EventStore
	reads, heads atomic.Int64
	// own counts the reads made with a subscriber's trust (catching up),
	// not the shared reader's (whose actor is the hub's holder).
	holder string
	own    atomic.Int64
}

func (c *countingEvents) FeedHead(ctx context.Context) (membrane.FeedHead, error) {
	c.heads.Add(1)
	return c.EventStore.FeedHead(ctx)
}

func (c *countingEvents) Events(ctx context.Context, q membrane.EventQuery) (membrane.EventBatch, error) {
	c.reads.Add(1)
	if membrane.TrustFromContext(ctx).Principal.Actor != c.holder {
		c.own.Add(1)
	}
	return c.EventStore.Events(ctx, q)
}

// receive takes n events from events, failing the test after 10 s.
func receive(t *testing.T, events <-chan *membrane.Event, n int) []*membrane.Event {
	t.Helper()
	var out []*membrane.Event
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("subscription ended after %d of %d events", len(out), n)
			}
			out = append(out, e)
		case <-timeout:
			t.Fatalf("got %d of %d events within 10s", len(out), n)
		}
	}
	return out
}

// TestFeedReadsPerWrite: the change feed reads each new range of entries
// from Neo4j once, however many subscriptions follow it. Subscriptions
// used to read every new range each, so every write cost a read
// transaction per open subscription (issue 15, finding 8).
func TestFeedReadsPerWrite(t *testing.T) {
	const writes = 3
	for _, subscribers := range []int{1, 8, 32} {
		t.Run(fmt.Sprint(subscribers, "subscribers"), func(t *testing.T) {
			store := &countingEvents{EventStore: neo4jtest.DB(t)}
			scope := neo4jtest.Scope(t)
			// Nothing pokes this hub (the shared test store announces no
			// writes) and its interval is long: the test ticks it.
			hub := feed.NewHub(store, feed.Config{Interval: time.Hour, Holder: t.Name()}, nil)
			runHub(t, hub)
			subs := make([]<-chan *membrane.Event, subscribers)
			for i := range subs {
				ch, err := hub.Start(sysCtx(t), feed.Subscription{Filter: membrane.ChangeFilter{Scopes: []string{scope}}, WithRecords: i%2 == 0})
				if err != nil {
					t.Fatal(err)
				}
				subs[i] = ch
			}
			before := store.reads.Load()
			for range writes {
				id := createFacts(t, neo4jtest.DB(t), scope, 1)[0]
				if err := hub.Tick(t.Context()); err != nil {
					t.Fatal(err)
				}
				for i, ch := range subs {
					e := receive(t, ch, 1)[0]
					if e.Entry.RecordID != id || e.Entry.Action != membrane.AuditCreate {
						t.Fatalf("subscriber %d got %+v, want the create of %s", i, e.Entry, id)
					}
					if withRecords := i%2 == 0; (e.Record != nil) != withRecords {
						t.Fatalf("subscriber %d: record %v, want one: %v", i, e.Record, withRecords)
					}
				}
			}
			// One read per tick that moved the head, plus the hub's own
			// first tick, which may land among the writes.
			if reads := store.reads.Load() - before; reads > writes+1 {
				t.Fatalf("%d feed reads for %d writes with %d subscriptions; want at most %d, whatever the number of subscriptions",
					reads, writes, subscribers, writes+1)
			}
		})
	}
}

// createAt writes one fact of sensitivity s in scope and returns its id.
func createAt(t *testing.T, scope string, s membrane.Sensitivity) string {
	t.Helper()
	r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeSemantic, Scope: &scope, Sensitivity: &s,
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: string(s), Predicate: "is", Object: "x",
			Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "t"}}}}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	in := &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "detail", time.Now())}
	if _, err := neo4jtest.DB(t).CreateRecords(sysCtx(t), nil, []*membrane.Ingested{in}); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// TestSharedFeedSeesWhatOwnReadSees: every subscriber of the shared
// reader gets exactly what reading the feed with its own trust and filter
// gives (what each subscription read before the reader was shared): the
// same entries in the same order, the same redaction of entries and
// records, the same cursors.
func TestSharedFeedSeesWhatOwnReadSees(t *testing.T) {
	db := neo4jtest.DB(t)
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	hub := feed.NewHub(db, feed.Config{Interval: time.Hour, Holder: t.Name()}, nil)
	runHub(t, hub)
	start, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	low := membrane.Principal{Actor: "low", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	elsewhere := membrane.Principal{Actor: "elsewhere", Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{other}}
	trusts := map[string]membrane.Trust{"system": membrane.SystemTrust("test")}
	for name, p := range map[string]membrane.Principal{"low": low, "elsewhere": elsewhere} {
		if trusts[name], err = membrane.NewTrust(p, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	filters := map[string]membrane.ChangeFilter{
		"scopes":      {Scopes: []string{scope, other}},
		"one scope":   {Scopes: []string{scope}, Types: []membrane.MemoryType{membrane.TypeSemantic}},
		"actor":       {Scopes: []string{scope, other}, Actors: []string{"test"}, Actions: []membrane.AuditAction{membrane.AuditCreate}},
		"other actor": {Scopes: []string{scope, other}, Actors: []string{"nobody"}},
	}
	type sub struct {
		name        string
		ctx         context.Context
		q           membrane.EventQuery
		events      <-chan *membrane.Event
		withRecords bool
	}
	var subs []sub
	for tn, tr := range trusts {
		for fn, f := range filters {
			for _, withRecords := range []bool{false, true} {
				ctx := membrane.NewContextWithTrust(t.Context(), tr)
				ch, err := hub.Start(ctx, feed.Subscription{Filter: f, WithRecords: withRecords})
				if err != nil {
					t.Fatal(err)
				}
				subs = append(subs, sub{name: fmt.Sprintf("%s/%s/records=%v", tn, fn, withRecords), ctx: ctx, events: ch,
					q: membrane.EventQuery{After: start.Seq, Limit: 1000, Filter: f, WithRecords: withRecords}})
			}
		}
	}
	for _, s := range []membrane.Sensitivity{membrane.SensitivityPublic, membrane.SensitivityLow, membrane.SensitivityMedium,
		membrane.SensitivityHigh, membrane.SensitivityHyper} {
		createAt(t, scope, s)
		createAt(t, other, s)
	}
	if err := hub.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	head, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	redacted := 0
	for _, s := range subs {
		q := s.q
		q.UpTo = head.Seq
		want, err := db.Events(s.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got := receive(t, s.events, len(want.Events))
		for i, w := range want.Events {
			g := got[i]
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: event %d = %+v (entry %+v, record %+v),\nwant %+v (entry %+v, record %+v)", s.name, i, g, g.Entry, g.Record, w, w.Entry, w.Record)
			}
		}
		select {
		case e := <-s.events:
			t.Errorf("%s: an extra event %+v", s.name, e.Entry)
		default:
		}
		for _, e := range got {
			if e.Redacted {
				redacted++
			}
		}
		// What the test's subscribers see none of: another actor's
		// entries; another scope's.
		nothing := strings.Contains(s.name, "other actor") || strings.HasPrefix(s.name, "elsewhere/one scope")
		if (len(want.Events) == 0) != nothing {
			t.Errorf("%s: %d events; the test expected some: %v", s.name, len(want.Events), !nothing)
		}
	}
	if redacted == 0 {
		t.Error("no subscriber saw a redacted entry; the test did not exercise redaction")
	}
}

// TestSlowSubscriber: a subscriber that does not read does not hold up
// the shared reader or the others; once it reads it gets every event, in
// order, once, and goes on following the feed.
func TestSlowSubscriber(t *testing.T) {
	store := &countingEvents{EventStore: neo4jtest.DB(t), holder: t.Name()}
	scope := neo4jtest.Scope(t)
	hub := feed.NewHub(store, feed.Config{Interval: time.Hour, Buffer: 3, Holder: t.Name()}, nil)
	runHub(t, hub)
	f := feed.Subscription{Filter: membrane.ChangeFilter{Scopes: []string{scope}}, WithRecords: true}
	slow, err := hub.Start(sysCtx(t), f)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := hub.Start(sysCtx(t), f)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for round := range 3 {
		ids = append(ids, createFacts(t, neo4jtest.DB(t), scope, 2+round)...)
		if err := hub.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		// The fast subscriber gets each round while the slow one reads
		// nothing: it went past its buffer in the second round.
		receive(t, fast, 2+round)
	}
	got := receive(t, slow, len(ids))
	for i, e := range got {
		if e.Entry.RecordID != ids[i] || i > 0 && e.Seq <= got[i-1].Seq || e.Record == nil {
			t.Fatalf("slow subscriber's event %d = %+v (seq %d), want the create of %s in order", i, e.Entry, e.Seq, ids[i])
		}
	}
	select {
	case e := <-slow:
		t.Fatalf("an extra event %+v", e.Entry)
	default:
	}
	// Its queue was bounded: past it, it read the rest itself.
	if store.own.Load() == 0 {
		t.Fatal("the slow subscriber never read on its own: the shared reader queued everything for it")
	}
	// It caught up on its own and follows the shared reader again.
	id := createFacts(t, neo4jtest.DB(t), scope, 1)[0]
	if err := hub.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan *membrane.Event{slow, fast} {
		if e := receive(t, ch, 1)[0]; e.Entry.RecordID != id {
			t.Fatalf("got %+v, want the create of %s", e.Entry, id)
		}
	}
}

// heldEvents is the real store; the reads made with holder's trust (the
// shared reader's) wait until release is closed, after saying so on held.
type heldEvents struct {
	membrane.EventStore
	holder  string
	held    chan struct{}
	release chan struct{}
	// own counts the reads of subscribers on their own (not the shared
	// reader's).
	own atomic.Int64
}

func (h *heldEvents) Events(ctx context.Context, q membrane.EventQuery) (membrane.EventBatch, error) {
	if membrane.TrustFromContext(ctx).Principal.Actor != h.holder {
		h.own.Add(1)
	} else {
		select {
		case h.held <- struct{}{}:
		default:
		}
		<-h.release
	}
	return h.EventStore.Events(ctx, q)
}

// TestJoinDuringSharedRead: a subscription that joins the shared reader
// while it reads gets its entries, though the read selected only those
// of the subscriptions that were there before it, and gets them from the
// reader's next read, not from reads of its own: under steady writes the
// reader is nearly always reading, and a joiner sent off to read alone
// would seldom get to share it.
func TestJoinDuringSharedRead(t *testing.T) {
	db := neo4jtest.DB(t)
	mine, theirs := neo4jtest.Scope(t), neo4jtest.Scope(t)
	store := &heldEvents{EventStore: db, holder: t.Name(), held: make(chan struct{}, 1), release: make(chan struct{})}
	hub := feed.NewHub(store, feed.Config{Interval: time.Hour, Holder: t.Name()}, nil)
	runHub(t, hub)
	if err := hub.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	start, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	after := start.Seq
	first, err := hub.Start(sysCtx(t), feed.Subscription{After: &after, Filter: membrane.ChangeFilter{Scopes: []string{theirs}}})
	if err != nil {
		t.Fatal(err)
	}
	theirID := createFacts(t, db, theirs, 1)[0]
	myID := createFacts(t, db, mine, 1)[0]
	if err := hub.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-store.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the shared reader did not read within 10s")
	}
	second, err := hub.Start(sysCtx(t), feed.Subscription{After: &after, Filter: membrane.ChangeFilter{Scopes: []string{mine}}})
	if err != nil {
		t.Fatal(err)
	}
	close(store.release)
	for ch, id := range map[<-chan *membrane.Event]string{first: theirID, second: myID} {
		if e := receive(t, ch, 1)[0]; e.Entry.RecordID != id {
			t.Fatalf("got %+v, want the create of %s", e.Entry, id)
		}
	}
	if n := store.own.Load(); n != 0 {
		t.Fatalf("%d reads of a subscriber's own, want the shared reader's only", n)
	}
}

// TestFarCursorKeepsSharing: a subscription with a cursor far past the
// head (a client may send any) does not stop the others from sharing the
// reader: they still cost one read per change between them.
func TestFarCursorKeepsSharing(t *testing.T) {
	const writes, subscribers = 3, 8
	store := &countingEvents{EventStore: neo4jtest.DB(t)}
	scope := neo4jtest.Scope(t)
	hub := feed.NewHub(store, feed.Config{Interval: time.Hour, Holder: t.Name()}, nil)
	runHub(t, hub)
	head, err := store.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	far := head.Seq + 1_000_000_000
	if _, err := hub.Start(sysCtx(t), feed.Subscription{After: &far}); err != nil {
		t.Fatal(err)
	}
	subs := make([]<-chan *membrane.Event, subscribers)
	for i := range subs {
		if subs[i], err = hub.Start(sysCtx(t), feed.Subscription{Filter: membrane.ChangeFilter{Scopes: []string{scope}}}); err != nil {
			t.Fatal(err)
		}
	}
	before := store.reads.Load()
	for range writes {
		id := createFacts(t, neo4jtest.DB(t), scope, 1)[0]
		if err := hub.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, ch := range subs {
			if e := receive(t, ch, 1)[0]; e.Entry.RecordID != id {
				t.Fatalf("got %+v, want the create of %s", e.Entry, id)
			}
		}
	}
	if reads := store.reads.Load() - before; reads > writes+1 {
		t.Fatalf("%d feed reads for %d writes with %d subscriptions; want at most %d", reads, writes, subscribers, writes+1)
	}
}

// TestSharedFeedUnderChurn: with writers committing, subscriptions joining
// while the reader reads, batches smaller than a tick's entries and
// subscribers that read only at the end (past their buffer), every
// subscriber still gets exactly what reading the feed with its own trust
// and filter gives.
func TestSharedFeedUnderChurn(t *testing.T) {
	db := neo4jtest.DB(t)
	a, b := neo4jtest.Scope(t), neo4jtest.Scope(t)
	hub := feed.NewHub(db, feed.Config{Interval: 5 * time.Millisecond, Batch: 4, Buffer: 5, Holder: t.Name()}, nil)
	runHub(t, hub)
	start, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	after := start.Seq
	low, err := membrane.NewTrust(membrane.Principal{Actor: "low", Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityLow, Scopes: []string{a, b}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	onlyB, err := membrane.NewTrust(membrane.Principal{Actor: "b", Role: membrane.RoleReader,
		MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{b}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	type sub struct {
		ctx    context.Context
		q      membrane.EventQuery
		events <-chan *membrane.Event
		late   bool
	}
	var (
		mu   sync.Mutex
		subs []sub
	)
	subscribe := func(i int) {
		tr := []membrane.Trust{membrane.SystemTrust("test"), low, onlyB}[i%3]
		f := []membrane.ChangeFilter{{Scopes: []string{a, b}}, {Scopes: []string{a}},
			{Scopes: []string{b}, Types: []membrane.MemoryType{membrane.TypeSemantic}}}[i%3]
		withRecords := i%2 == 0
		ctx := membrane.NewContextWithTrust(t.Context(), tr)
		ch, err := hub.Start(ctx, feed.Subscription{After: &after, Filter: f, WithRecords: withRecords})
		if err != nil {
			t.Error(err)
			return
		}
		s := sub{ctx: ctx, q: membrane.EventQuery{After: after, Limit: 1000, Filter: f, WithRecords: withRecords}, events: ch, late: i%4 == 1}
		if !s.late {
			// A prompt subscriber takes its events as they come.
			prompt := make(chan *membrane.Event, 1000)
			go func() {
				defer close(prompt)
				for e := range ch {
					prompt <- e
				}
			}()
			s.events = prompt
		}
		mu.Lock()
		defer mu.Unlock()
		subs = append(subs, s)
	}
	for i := range 6 {
		subscribe(i)
	}
	sensitivities := []membrane.Sensitivity{membrane.SensitivityPublic, membrane.SensitivityLow, membrane.SensitivityMedium}
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Go(func() {
			for i := range 8 {
				createAt(t, []string{a, b}[(w+i)%2], sensitivities[(w+i)%3])
				if w == 0 && i%2 == 0 {
					subscribe(6 + i/2) // joins while entries are being read
				}
			}
		})
	}
	writers.Wait()
	if err := hub.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	head, err := db.FeedHead(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	late := 0
	for i, s := range subs {
		q := s.q
		q.UpTo = head.Seq
		want, err := db.Events(s.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Events) <= 5 {
			t.Fatalf("subscriber %d: %d events; the test expected more than its buffer", i, len(want.Events))
		}
		if s.late {
			late++
		}
		events := receive(t, s.events, len(want.Events))
		for j, w := range want.Events {
			if g := events[j]; !reflect.DeepEqual(g, w) {
				t.Fatalf("subscriber %d (late %v), event %d: got seq %d %+v redacted %v, want seq %d %+v redacted %v",
					i, s.late, j, g.Seq, g.Entry, g.Redacted, w.Seq, w.Entry, w.Redacted)
			}
		}
		select {
		case e := <-s.events:
			t.Fatalf("subscriber %d: an extra event %+v", i, e.Entry)
		default:
		}
	}
	if late == 0 || late == len(subs) {
		t.Fatalf("%d of %d subscribers late; the test wants both kinds", late, len(subs))
	}
}
