// Package feed serves Membrane's change feed to subscribers. Every server
// process runs one Hub: it numbers committed audit entries (one process at
// a time, serialised by a lock in Neo4j, so the numbers follow commit order
// across replicas) and follows the feed's head. One shared reader per hub
// reads each new range of entries from Neo4j once and fans it out to every
// live subscription, each gated in memory by its own trust and filter
// (membrane.Trust.GateEvent), so that a write costs the same however many
// subscriptions are open. A subscription that starts behind the shared
// reader, or falls behind it, reads from its own cursor with its own
// trust until it has caught up.
package feed

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/safego"
)

// Config tunes a Hub.
type Config struct {
	// Interval is how often the hub looks for new entries when nothing
	// wakes it sooner; it bounds how late a change made through another
	// replica reaches this one's subscribers.
	Interval time.Duration
	// Batch is the most entries numbered, or read for one subscriber, per
	// transaction.
	Batch int
	// Gather is how long the hub waits after a local write wakes it, so
	// that the writes of that moment are numbered together; it is the
	// least latency of a local change to its subscribers.
	Gather time.Duration
	// Holder names this process on the sequencer's lock (for operators).
	Holder string
	// Buffer is the most events a live subscription may hold that its
	// client has not taken yet. One that falls further behind leaves the
	// shared reader (which never waits for it) and catches up by reading
	// from its own cursor. Zero: 4 batches.
	Buffer int
	// MaxSubscriptions bounds the subscriptions open on this hub, that is
	// on this server process (0: no limit).
	MaxSubscriptions int
	// PerPrincipal returns how many subscriptions a principal may have
	// open on this hub (0: no limit); nil means no limit.
	PerPrincipal func(membrane.Principal) int
}

// DefaultConfig is used for zero fields.
var DefaultConfig = Config{Interval: 100 * time.Millisecond, Batch: 1000, Gather: 20 * time.Millisecond, Holder: "membrane"}

// Hub numbers the feed and wakes subscribers. Safe for concurrent use.
type Hub struct {
	store membrane.EventStore
	cfg   Config
	log   *slog.Logger

	poke chan struct{}
	// life ends every subscription when the hub is closed.
	life  context.Context
	close context.CancelFunc

	mu      sync.Mutex
	head    int64
	changed chan struct{} // closed and replaced when head moves or a follower joins
	active  int
	// open counts each principal's open subscriptions, by actor.
	open map[string]int

	// The shared reader's state: it has fanned out every entry up to tail
	// to followers, the live subscriptions. epoch changes when tail is
	// moved for a first follower, so that a read begun before is dropped.
	tail      int64
	epoch     int64
	followers map[*follower]struct{}
	// round counts the reader's reads; a follower that joined during one
	// is not among those it read for.
	round uint64
}

// NewHub returns a hub over store; call Run to start it.
func NewHub(store membrane.EventStore, cfg Config, log *slog.Logger) *Hub {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultConfig.Interval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultConfig.Batch
	}
	if cfg.Gather <= 0 {
		cfg.Gather = DefaultConfig.Gather
	}
	if cfg.Holder == "" {
		cfg.Holder = DefaultConfig.Holder
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4 * cfg.Batch
	}
	if log == nil {
		log = slog.Default()
	}
	h := &Hub{store: store, cfg: cfg, log: log, poke: make(chan struct{}, 1), changed: make(chan struct{}),
		open: map[string]int{}, followers: map[*follower]struct{}{}}
	h.life, h.close = context.WithCancel(context.Background())
	return h
}

// Close ends every subscription (each channel is closed, so its client
// gets "complete") and refuses new ones; a server calls it when it begins
// to shut down.
func (h *Hub) Close() {
	h.close()
}

// Poke makes the hub look for new entries now rather than at its next
// tick. Call it after a local write commits; it never blocks.
func (h *Hub) Poke() {
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

// Run numbers new entries, follows the head and runs the shared reader
// until ctx ends. A failing database is logged and retried at the next
// tick; subscribers just wait.
func (h *Hub) Run(ctx context.Context) {
	var reader sync.WaitGroup
	reader.Go(func() { h.share(ctx) })
	defer reader.Wait()
	t := time.NewTicker(h.cfg.Interval)
	defer t.Stop()
	failing := false
	for {
		err := h.Tick(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			h.log.WarnContext(ctx, "change feed: cannot read or number the feed; retrying", "err", err)
			failing = true
		case err == nil && failing:
			h.log.InfoContext(ctx, "change feed: recovered")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.poke:
			// Gather the commits of the next moment into the same
			// numbering transaction: one per write would cost a busy
			// server a second write transaction per request.
			select {
			case <-ctx.Done():
				return
			case <-time.After(h.cfg.Gather):
			}
		}
	}
}

// Go runs Run in a goroutine of its own and returns the function that
// stops it and waits until it has returned (so that no tick of it reaches
// the database afterwards); calling it again does nothing.
func (h *Hub) Go() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	safego.Go("change feed", func() {
		defer close(done)
		h.Run(ctx)
	})
	return sync.OnceFunc(func() {
		cancel()
		<-done
	})
}

// Tick numbers every committed entry waiting for a number and publishes
// the head. Run calls it; tests call it to step the hub.
func (h *Hub) Tick(ctx context.Context) error {
	head, err := h.store.FeedHead(ctx)
	if err != nil {
		return err
	}
	seq := head.Seq
	for head.Pending {
		n, last, err := h.store.SequenceEvents(ctx, h.cfg.Holder, h.cfg.Batch)
		if err != nil {
			h.publish(seq)
			return err
		}
		seq = max(seq, last)
		if n < h.cfg.Batch {
			break
		}
	}
	h.publish(seq)
	return nil
}

func (h *Hub) publish(seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if seq > h.head {
		h.head = seq
		h.signal()
	}
}

// signal wakes everything waiting on h.changed; h.mu is held.
func (h *Hub) signal() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Active returns how many subscriptions are following the feed.
func (h *Hub) Active() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.active
}
