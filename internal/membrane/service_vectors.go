package membrane

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// vectorQueueSize is how many records may wait for their vectors by
// default (ServiceOptions.VectorQueue). Past it a write does not wait: its
// records are left to the embed job, which the writer runs once its queue
// has drained.
const vectorQueueSize = 10000

// vectorWriteTimeout bounds one batch: the embedding call and the write.
const vectorWriteTimeout = 30 * time.Second

// vectorLinger is how long the writer gathers records after the first of
// a batch before it writes them: a vector commit costs as much as a batch
// of tens, so a client writing one record after another gets one commit
// for every few writes, and its records their vectors this much later.
const vectorLinger = 100 * time.Millisecond

// vectorWriter embeds the records that writes created after their
// transactions commit, and stores the vectors, in batches, on a goroutine
// of its own (embedding.background). Every transaction that writes a vector
// pays for the vector index (on this machine about 20 ms a commit, against
// 1.4 ms per vector in a batch of 128: docs/BENCHMARKS.md), so one write
// per request held captures to about 20 a second with 8 clients; batched,
// writes do not wait for the model or the index at all. It gathers what is
// written within vectorLinger of a batch's first record (or a batch's
// worth), so a record is found by full text and the graph from its write
// and by its vector about a tenth of a second later. What the queue loses (a
// crash, a failing model, a record revised meanwhile) the embed job gives a
// vector at its next run. What a full queue turns away (a bulk ingest
// faster than the model) it gives at once: once the queue has drained, the
// writer runs the embed job (catchUp), so that a large import gets its
// vectors as fast as the model allows rather than at the job's next
// scheduled run, up to ten minutes later.
type vectorWriter struct {
	store    EmbedStore
	embedder Embedder
	max      Sensitivity
	log      *slog.Logger
	queue    chan *Record
	done     chan struct{}
	// catchUp runs the embed job (nil: no job runner; the records a full
	// queue turned away wait for the job's schedule).
	catchUp func(context.Context)
	// overflowed is set when the full queue turned a record away, and
	// cleared when the writer, its queue drained, runs catchUp.
	overflowed atomic.Bool
	// ctx is catchUp's, canceled by Close: a shutdown does not wait for a
	// whole embed run (each of its batches commits on its own).
	ctx    context.Context
	cancel context.CancelFunc
	// mu guards closed: a write finishing during shutdown must not send
	// on the closed queue.
	mu     sync.RWMutex
	closed bool
}

// newVectorWriter starts a writer with a queue of size records (0:
// vectorQueueSize); Close stops it.
func newVectorWriter(store EmbedStore, e Embedder, max Sensitivity, size int, catchUp func(context.Context), log *slog.Logger) *vectorWriter {
	if size <= 0 {
		size = vectorQueueSize
	}
	w := &vectorWriter{store: store, embedder: e, max: max, log: log, catchUp: catchUp,
		queue: make(chan *Record, size), done: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run()
	return w
}

// add queues the embeddable records of recs without waiting.
func (w *vectorWriter) add(recs ...*Record) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return
	}
	for _, r := range recs {
		if r == nil || !Embeddable(r, w.max) {
			continue
		}
		select {
		case w.queue <- r:
		default:
			// Once per overflow, not per record: a bulk import turns
			// away tens of thousands.
			if !w.overflowed.Swap(true) {
				w.log.Warn("vector queue full: the records it turns away get their vectors from the embed job, run when the queue has drained",
					"queue", cap(w.queue))
			}
		}
	}
}

// run writes batches until the queue is closed and drained.
func (w *vectorWriter) run() {
	defer close(w.done)
	for r := range w.queue {
		batch := []*Record{r}
		linger := time.NewTimer(vectorLinger)
	more:
		for len(batch) < embedBatch {
			select {
			case r, ok := <-w.queue:
				if !ok {
					break more
				}
				batch = append(batch, r)
			case <-linger.C:
				break more
			}
		}
		linger.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), vectorWriteTimeout)
		if _, err := embedRecords(ctx, w.store, w.embedder, w.max, batch); err != nil {
			w.log.Warn("embedding new records failed: the embed job will give them vectors", "err", err, "records", len(batch))
		}
		cancel()
		// The queue was full when it turned records away, so the flag is
		// set before the batches that drain it: it is seen here after
		// the last of them.
		if len(w.queue) == 0 && w.catchUp != nil && w.overflowed.Swap(false) {
			w.catchUp(w.ctx)
		}
	}
}

// Close stops taking records and waits until those queued are written,
// or ctx ends.
func (w *vectorWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
		w.cancel()
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// embedJobNow runs the embed job for the records a full vector queue
// turned away. A run under way elsewhere (CONFLICT) walks the records in
// id order, and ids grow with time, so it reaches them too.
func embedJobNow(ctx context.Context, jobs JobRunner, log *slog.Logger) {
	run, err := jobs.RunJob(ctx, JobEmbed)
	switch {
	case ErrorCode(err) == ECONFLICT:
		log.Info("vector queue drained: the embed job is already running")
	case err != nil:
		log.Warn("vector queue drained: the embed job did not run; its schedule will", "err", err)
	default:
		log.Info("vector queue drained: the embed job gave the records it turned away their vectors",
			"outcome", run.Outcome, "changed", run.Changed)
	}
}
