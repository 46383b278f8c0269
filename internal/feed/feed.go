// Package feed serves Membrane's change feed to subscribers. Every server
// process runs one Hub: it numbers committed audit entries (one process at
// a time, serialised by a lock in Neo4j, so the numbers follow commit order
// across replicas), follows the feed's head and wakes the subscriptions
// waiting for it. Each subscription reads the entries after its cursor with
// its own trust, so gating is the store's, exactly as for queries.
package feed

import (
	"context"
	"errors"
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
}

// DefaultConfig is used for zero fields.
var DefaultConfig = Config{Interval: 100 * time.Millisecond, Batch: 1000, Gather: 20 * time.Millisecond, Holder: "membrane"}

// Hub numbers the feed and wakes subscribers. Safe for concurrent use.
type Hub struct {
	store membrane.EventService
	cfg   Config
	log   *slog.Logger

	poke chan struct{}
	// life ends every subscription when the hub is closed.
	life  context.Context
	close context.CancelFunc

	mu      sync.Mutex
	head    int64
	changed chan struct{} // closed and replaced when head moves
	active  int
}

// NewHub returns a hub over store; call Run to start it.
func NewHub(store membrane.EventService, cfg Config, log *slog.Logger) *Hub {
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
	if log == nil {
		log = slog.Default()
	}
	h := &Hub{store: store, cfg: cfg, log: log, poke: make(chan struct{}, 1), changed: make(chan struct{})}
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

// Run numbers new entries and follows the head until ctx ends. A failing
// database is logged and retried at the next tick; subscribers just wait.
func (h *Hub) Run(ctx context.Context) {
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
		close(h.changed)
		h.changed = make(chan struct{})
	}
}

// wait returns the head once it is past after, or ctx's error.
func (h *Hub) wait(ctx context.Context, after int64) (int64, error) {
	for {
		h.mu.Lock()
		head, changed := h.head, h.changed
		h.mu.Unlock()
		if head > after {
			return head, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-changed:
		}
	}
}

// Active returns how many subscriptions are following the feed.
func (h *Hub) Active() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.active
}

// Subscription is what a subscriber asks for.
type Subscription struct {
	// After is the cursor to resume after; nil means from now on.
	After  *int64
	Filter membrane.ChangeFilter
	// WithRecords: see membrane.EventQuery.
	WithRecords bool
}

// Start validates s, fixes its starting point (the current head when it
// has no cursor, so that changes from the moment it is accepted are
// delivered) and returns the events in order on the returned channel until
// ctx ends. Events are read with ctx's trust. A subscriber that does not
// keep up slows only itself: nothing is buffered beyond one event.
func (h *Hub) Start(ctx context.Context, s Subscription) (<-chan *membrane.Event, error) {
	if err := s.Filter.Validate(); err != nil {
		return nil, err
	}
	if h.life.Err() != nil {
		return nil, membrane.Errorf(membrane.EUNAVAILABLE, "the server is shutting down; subscribe again")
	}
	var from int64
	if s.After != nil {
		from = *s.After
	} else {
		head, err := h.store.FeedHead(ctx)
		if err != nil {
			return nil, err
		}
		from = head.Seq
	}
	out := make(chan *membrane.Event)
	h.mu.Lock()
	h.active++
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.life, cancel)
	safego.Go("change feed subscription", func() {
		defer func() {
			stop()
			cancel()
			h.mu.Lock()
			h.active--
			h.mu.Unlock()
			close(out)
		}()
		h.follow(ctx, from, s, out)
	})
	return out, nil
}

// follow delivers the events after cursor until ctx ends. Reads that fail
// (the database is away) are retried with backoff: a dashboard's
// subscription outlives an outage, and resumes where it was.
func (h *Hub) follow(ctx context.Context, cursor int64, s Subscription, out chan<- *membrane.Event) {
	backoff := time.Duration(0)
	for {
		head, err := h.wait(ctx, cursor)
		if err != nil {
			return
		}
		for cursor < head {
			b, err := h.store.Events(ctx, membrane.EventQuery{After: cursor, UpTo: head, Limit: h.cfg.Batch,
				Filter: s.Filter, WithRecords: s.WithRecords})
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				backoff = min(max(2*backoff, h.cfg.Interval), 5*time.Second)
				if !errors.Is(err, context.Canceled) {
					h.log.WarnContext(ctx, "change feed: read failed; retrying", "err", err, "retry_in", backoff)
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				continue
			}
			backoff = 0
			for _, e := range b.Events {
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			}
			// Past everything read, including what the filter and the
			// gate left out.
			cursor = b.Next
		}
	}
}
