package feed

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// Subscription is what a subscriber asks for.
type Subscription struct {
	// After is the cursor to resume after; nil means from now on.
	After  *int64
	Filter membrane.ChangeFilter
	// WithRecords: see membrane.EventQuery.
	WithRecords bool
}

// follower is one subscription. While it follows the shared reader (it is
// in Hub.followers) the reader queues its events; the fields are guarded
// by Hub.mu.
type follower struct {
	trust membrane.Trust
	sub   Subscription
	// wake has room for one signal: events were queued or the follower
	// was detached.
	wake chan struct{}

	queue []*membrane.Event
	// next is the position the queue reaches: every entry up to it was
	// queued or left out by the filter and the gate.
	next int64
	// detached is set when the reader dropped the follower: it was too
	// far behind (its queue full) or joined during a read, which was not
	// made for it.
	detached bool
	// joined is the reader's round when the follower joined.
	joined uint64
}

func (f *follower) notify() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Start validates s, fixes its starting point (the current head when it
// has no cursor, so that changes from the moment it is accepted are
// delivered) and returns the events in order on the returned channel until
// ctx ends. Events are gated by ctx's trust. A subscriber that does not
// keep up slows only itself: the shared reader queues at most
// Config.Buffer events for it, then leaves it to read from its own cursor.
//
// A principal over its limit of open subscriptions, or a hub at its
// limit, is refused with RATE_LIMITED before anything is read.
func (h *Hub) Start(ctx context.Context, s Subscription) (<-chan *membrane.Event, error) {
	if err := s.Filter.Validate(); err != nil {
		return nil, err
	}
	if h.life.Err() != nil {
		return nil, membrane.Errorf(membrane.EUNAVAILABLE, "the server is shutting down; subscribe again")
	}
	trust := membrane.TrustFromContext(ctx)
	if err := h.admit(trust.Principal); err != nil {
		return nil, err
	}
	release := sync.OnceFunc(func() { h.release(trust.Principal.Actor) })
	var from int64
	if s.After != nil {
		from = *s.After
	} else {
		head, err := h.store.FeedHead(ctx)
		if err != nil {
			release()
			return nil, err
		}
		from = head.Seq
	}
	out := make(chan *membrane.Event)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.life, cancel)
	f := &follower{trust: trust, sub: s, wake: make(chan struct{}, 1)}
	// A subscription is started by a request: whatever goes wrong in it
	// ends the subscription, never the process (safego recovers, logs and
	// counts a panic).
	safego.Go("change feed subscription", func() {
		defer func() {
			h.leave(f)
			stop()
			cancel()
			release()
			close(out)
		}()
		h.follow(ctx, f, from, out)
	})
	return out, nil
}

// admit counts a new subscription of p, or refuses it over a limit.
func (h *Hub) admit(p membrane.Principal) error {
	limit := 0
	if h.cfg.PerPrincipal != nil {
		limit = h.cfg.PerPrincipal(p)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.cfg.MaxSubscriptions; m > 0 && h.active >= m {
		return membrane.Errorf(membrane.ERATELIMITED,
			"this server has %d subscriptions open, its limit; subscribe again later", m)
	}
	if limit > 0 && h.open[p.Actor] >= limit {
		return membrane.Errorf(membrane.ERATELIMITED,
			"principal %q has %d subscriptions open on this server, its limit; close one first", p.Actor, limit)
	}
	h.active++
	h.open[p.Actor]++
	return nil
}

func (h *Hub) release(actor string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.active--
	if h.open[actor]--; h.open[actor] <= 0 {
		delete(h.open, actor)
	}
}

// follow delivers the events after cursor until ctx ends: read on its own
// until it has caught up with the shared reader, then from the queue the
// reader fills, and on its own again whenever the reader drops it.
func (h *Hub) follow(ctx context.Context, f *follower, cursor int64, out chan<- *membrane.Event) {
	for {
		var ok bool
		if cursor, ok = h.catchUp(ctx, f, cursor, out); !ok {
			return
		}
		for {
			h.mu.Lock()
			q, detached, next := f.queue, f.detached, f.next
			f.queue = nil
			h.mu.Unlock()
			if !send(ctx, out, q) {
				return
			}
			if detached {
				// q was the whole queue: it reaches next.
				cursor = next
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-f.wake:
			}
		}
	}
}

// catchUp reads the entries after cursor with the subscriber's trust and
// filter until it can join the shared reader, and returns the cursor it
// joined at; false when ctx ended. Reads that fail (the database is away)
// are retried with backoff: a dashboard's subscription outlives an outage,
// and resumes where it was.
func (h *Hub) catchUp(ctx context.Context, f *follower, cursor int64, out chan<- *membrane.Event) (int64, bool) {
	backoff := time.Duration(0)
	for {
		h.mu.Lock()
		joined, tail := h.join(f, cursor), h.tail
		h.mu.Unlock()
		if joined {
			return cursor, true
		}
		b, err := h.store.Events(ctx, membrane.EventQuery{After: cursor, UpTo: tail, Limit: h.cfg.Batch,
			Filter: f.sub.Filter, WithRecords: f.sub.WithRecords})
		if err != nil {
			if ctx.Err() != nil {
				return 0, false
			}
			backoff = min(max(2*backoff, h.cfg.Interval), 5*time.Second)
			if !errors.Is(err, context.Canceled) {
				h.log.WarnContext(ctx, "change feed: read failed; retrying", "err", err, "retry_in", backoff)
			}
			select {
			case <-ctx.Done():
				return 0, false
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if !send(ctx, out, b.Events) {
			return 0, false
		}
		// Past everything read, including what the filter and the gate
		// left out.
		cursor = b.Next
	}
}

// join makes f a follower of the shared reader when it has read up to
// where the reader is; h.mu is held. The reader serves no one behind it:
// a subscriber behind catches up on its own, so that an old cursor never
// delays the others. The tail never passes the published head (a
// subscriber reads up to the tail), whatever cursor a client sends.
func (h *Hub) join(f *follower, cursor int64) bool {
	if len(h.followers) == 0 {
		// No one follows the reader: it starts again at the head,
		// skipping entries no one waits for.
		h.tail = h.head
		h.epoch++
	}
	if cursor < h.tail {
		return false
	}
	f.queue, f.next, f.detached, f.joined = nil, cursor, false, h.round
	h.followers[f] = struct{}{}
	h.signal()
	return true
}

func (h *Hub) leave(f *follower) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.followers, f)
}

// coverLimit bounds each list of the filter the shared reader reads with:
// past it, the reader reads every value of that list.
const coverLimit = 10 * membrane.MaxFilterValues

// share is the shared reader: while subscriptions follow it, it reads each
// new range of the feed once, as a trust that sees everything, selecting
// the entries some follower's filter selects (membrane.CoverFilters), and
// queues each follower's share of it, gated by the follower's trust and
// filter.
// It never waits for a follower: one whose queue is full is dropped, to
// catch up on its own.
func (h *Hub) share(ctx context.Context) {
	for ctx.Err() == nil {
		h.shareUntilPanic(ctx)
	}
}

// shareUntilPanic is share's loop. Subscribers' filters reach it, so a
// panic in it must not end the process: it is logged, every follower is
// dropped to read on its own, and share starts the loop again.
func (h *Hub) shareUntilPanic(ctx context.Context) {
	defer func() {
		if v := recover(); v != nil {
			safego.Recovered("change feed shared reader", v)
			h.mu.Lock()
			defer h.mu.Unlock()
			for f := range h.followers {
				f.detached = true
				f.notify()
				delete(h.followers, f)
			}
		}
	}()
	read := membrane.NewContextWithTrust(ctx, membrane.SystemTrust(h.cfg.Holder))
	backoff := time.Duration(0)
	for {
		h.mu.Lock()
		// Moving the tail up to where the followers are keeps it from
		// lagging: a subscriber joins only at or past the tail.
		h.tail = h.next()
		for len(h.followers) == 0 || h.head <= h.tail {
			changed := h.changed
			h.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
			h.mu.Lock()
			h.tail = h.next()
		}
		from := h.tail
		upTo, epoch := h.head, h.epoch
		h.round++
		round := h.round
		withRecords := false
		filters := make([]membrane.ChangeFilter, 0, len(h.followers))
		for f := range h.followers {
			withRecords = withRecords || f.sub.WithRecords
			filters = append(filters, f.sub.Filter)
		}
		h.mu.Unlock()

		b, err := h.store.Events(read, membrane.EventQuery{After: from, UpTo: upTo, Limit: h.cfg.Batch,
			Filter: membrane.CoverFilters(filters, coverLimit), WithRecords: withRecords})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, h.cfg.Interval), 5*time.Second)
			h.log.WarnContext(ctx, "change feed: read failed; retrying", "err", err, "retry_in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		h.fanOut(b, epoch, round)
	}
}

// next returns where the shared reader is to read from: its tail, or past
// it when every follower is further (they joined before the head was
// published, or with a cursor past the head), but never past the head;
// h.mu is held.
func (h *Hub) next() int64 {
	least := int64(math.MaxInt64)
	for f := range h.followers {
		least = min(least, f.next)
	}
	return max(h.tail, min(least, h.head))
}

// fanOut offers b to every follower and moves the tail past it.
func (h *Hub) fanOut(b membrane.EventBatch, epoch int64, round uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A first follower moved the tail while b was read: b may not start
	// where the tail is now.
	if h.epoch != epoch {
		return
	}
	tail := b.Next
	for f := range h.followers {
		if f.joined >= round {
			// It joined during this read, which was not made for it (its
			// filter and records may be missing): it stays, and the next
			// read starts no later than its cursor, for it. The others
			// are past that range (offer skips what they have), so the
			// re-read sends them nothing twice.
			tail = min(tail, f.next)
			continue
		}
		if !h.offer(f, b) {
			delete(h.followers, f)
		}
	}
	h.tail = tail
}

// offer queues f's share of b; h.mu is held. It returns false when f is
// dropped: its queue would pass Config.Buffer.
func (h *Hub) offer(f *follower, b membrane.EventBatch) bool {
	var add []*membrane.Event
	for _, e := range b.Events {
		if e.Seq <= f.next || !f.sub.Filter.Matches(e) {
			continue
		}
		if g := f.trust.GateEvent(e, f.sub.WithRecords); g != nil {
			add = append(add, g)
		}
	}
	if len(f.queue)+len(add) > h.cfg.Buffer {
		f.detached = true
		f.notify()
		return false
	}
	f.queue = append(f.queue, add...)
	f.next = max(f.next, b.Next)
	if len(add) > 0 {
		f.notify()
	}
	return true
}

// send delivers events in order; false when ctx ended first.
func send(ctx context.Context, out chan<- *membrane.Event, events []*membrane.Event) bool {
	for _, e := range events {
		select {
		case out <- e:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
