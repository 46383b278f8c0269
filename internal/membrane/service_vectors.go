package membrane

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// vectorQueueSize is how many records may wait for their vectors. Past
// it a write does not wait: its records are left to the embed job.
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
// crash, a full queue, a failing model, a record revised meanwhile) the
// embed job gives a vector at its next run.
type vectorWriter struct {
	store    EmbedStore
	embedder Embedder
	max      Sensitivity
	log      *slog.Logger
	queue    chan *Record
	done     chan struct{}
	// mu guards closed: a write finishing during shutdown must not send
	// on the closed queue.
	mu     sync.RWMutex
	closed bool
}

// newVectorWriter starts a writer; Close stops it.
func newVectorWriter(store EmbedStore, e Embedder, max Sensitivity, log *slog.Logger) *vectorWriter {
	w := &vectorWriter{store: store, embedder: e, max: max, log: log,
		queue: make(chan *Record, vectorQueueSize), done: make(chan struct{})}
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
			w.log.Warn("vector queue full: a record is left to the embed job", "record", r.ID)
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
	}
}

// Close stops taking records and waits until those queued are written,
// or ctx ends.
func (w *vectorWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
