package membrane

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// BatchingEmbedder gathers the texts of concurrent Embed calls into one
// call of the embedder it wraps: a call that finds the embedder idle goes
// at once, alone; calls that arrive while one is under way wait and then go
// together, up to max texts per call. An embedding model costs far more per
// text for a few texts than for a batch (the model inside Neo4j: 700
// texts/s at 256 a call), so captures from 8 concurrent clients, each
// embedding its own three texts in a call, ran at a fifth of the rate of
// the same captures without vectors (docs/BENCHMARKS.md). Nothing waits
// on a timer: at low load a call costs what it did.
type BatchingEmbedder struct {
	inner Embedder
	max   int
	// timeout bounds one call of inner, which serves callers with
	// deadlines of their own (each returns at its own).
	timeout time.Duration

	mu      sync.Mutex
	queue   []*embedWait
	running bool
}

type embedWait struct {
	texts []string
	done  chan embedResult
}

type embedResult struct {
	vecs [][]float64
	err  error
}

var _ Embedder = (*BatchingEmbedder)(nil)

// NewBatchingEmbedder wraps e; max is the most texts of one call of e
// (a single caller's texts are never split: a call of more goes alone).
func NewBatchingEmbedder(e Embedder, max int) *BatchingEmbedder {
	return &BatchingEmbedder{inner: e, max: max, timeout: 30 * time.Second}
}

// Dimensions implements Embedder.
func (b *BatchingEmbedder) Dimensions() int { return b.inner.Dimensions() }

// Model implements Embedder.
func (b *BatchingEmbedder) Model() string { return b.inner.Model() }

// Embed implements Embedder: texts are embedded in one call of the wrapped
// embedder with the texts of the calls waiting beside it. It returns at
// ctx's end whether or not that call has.
func (b *BatchingEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	w := &embedWait{texts: texts, done: make(chan embedResult, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, w)
	if !b.running {
		b.running = true
		go b.drain()
	}
	b.mu.Unlock()
	select {
	case r := <-w.done:
		return r.vecs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drain embeds the queue, a batch at a time, until it is empty.
func (b *BatchingEmbedder) drain() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(b.queue) && (n == 0 || size+len(b.queue[n].texts) <= b.max) {
			size += len(b.queue[n].texts)
			n++
		}
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.embed(batch)
	}
}

// embed runs one call of the wrapped embedder for batch and gives each
// waiting caller its vectors, or the call's error.
func (b *BatchingEmbedder) embed(batch []*embedWait) {
	var texts []string
	for _, w := range batch {
		texts = append(texts, w.texts...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	vecs, err := b.inner.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the embedding model returned %d vectors for %d texts", len(vecs), len(texts))
	}
	at := 0
	for _, w := range batch {
		if err != nil {
			w.done <- embedResult{err: err}
			continue
		}
		w.done <- embedResult{vecs: vecs[at : at+len(w.texts) : at+len(w.texts)]}
		at += len(w.texts)
	}
}
