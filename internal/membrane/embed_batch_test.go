package membrane_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// gatedEmbedder embeds a text as [len(text)], records each call's texts,
// and holds every call until the test lets it go.
type gatedEmbedder struct {
	mu      sync.Mutex
	calls   [][]string
	entered chan struct{}
	gate    chan struct{}
	err     error
}

func newGated() *gatedEmbedder {
	return &gatedEmbedder{entered: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	g.mu.Lock()
	g.calls = append(g.calls, slices.Clone(texts))
	g.mu.Unlock()
	g.entered <- struct{}{}
	<-g.gate
	if g.err != nil {
		return nil, g.err
	}
	out := make([][]float64, len(texts))
	for i, t := range texts {
		out[i] = []float64{float64(len(t))}
	}
	return out, nil
}
func (g *gatedEmbedder) Dimensions() int { return 1 }
func (g *gatedEmbedder) Model() string   { return "gated" }

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing within 30 s", what)
	}
	panic("unreachable")
}

type embedded struct {
	texts []string
	vecs  [][]float64
	err   error
}

func embedAsync(b membrane.Embedder, ctx context.Context, texts ...string) <-chan embedded {
	out := make(chan embedded, 1)
	go func() {
		v, err := b.Embed(ctx, texts)
		out <- embedded{texts, v, err}
	}()
	return out
}

// TestBatchingEmbedder: a call that finds the embedder idle goes alone;
// calls made while it runs go together in the next calls (up to max texts
// each, a caller's texts never split), and each caller gets its own
// vectors.
func TestBatchingEmbedder(t *testing.T) {
	g := newGated()
	b := membrane.NewBatchingEmbedder(g, 3)
	first := embedAsync(b, t.Context(), "a")
	wait(t, g.entered, "the first call")
	callers := [][]string{{"bb", "ccc"}, {"dddd"}, {"eeeee", "ffffff"}}
	var waiting []<-chan embedded
	for _, texts := range callers {
		waiting = append(waiting, embedAsync(b, t.Context(), texts...))
	}
	for deadline := time.Now().Add(30 * time.Second); b.Waiting() < len(callers); {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers waiting, want %d", b.Waiting(), len(callers))
		}
		runtime.Gosched()
	}
	close(g.gate)
	results := []embedded{wait(t, first, "the first")}
	for _, ch := range waiting {
		results = append(results, wait(t, ch, "a waiting call"))
	}
	for _, r := range results {
		if r.err != nil || len(r.vecs) != len(r.texts) {
			t.Fatalf("%v: %v, %v", r.texts, r.vecs, r.err)
		}
		for i, text := range r.texts {
			if r.vecs[i][0] != float64(len(text)) {
				t.Errorf("%q got the vector of another text: %v", text, r.vecs[i])
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// The first alone; the 5 waiting texts in two calls of at most 3 (the
	// order the callers queued in decides which), no caller split.
	if len(g.calls) != 3 || fmt.Sprint(g.calls[0]) != "[a]" {
		t.Fatalf("calls %v, want [a] and then two batches", g.calls)
	}
	var all []string
	for _, call := range g.calls[1:] {
		if len(call) > 3 {
			t.Errorf("a call of %d texts, over the max of 3: %v", len(call), call)
		}
		all = append(all, call...)
		for _, c := range callers {
			if i := slices.Index(call, c[0]); i >= 0 && !slices.Equal(call[i:min(len(call), i+len(c))], c) {
				t.Errorf("caller %v split in %v", c, call)
			}
		}
	}
	slices.Sort(all)
	if fmt.Sprint(all) != "[bb ccc dddd eeeee ffffff]" {
		t.Errorf("the batches embedded %v", all)
	}
}

// TestBatchingEmbedderErrors: the wrapped embedder's error reaches every
// caller of its call; a caller whose context ends returns at once.
func TestBatchingEmbedderErrors(t *testing.T) {
	g := newGated()
	g.err = errors.New("model down")
	b := membrane.NewBatchingEmbedder(g, 256)
	first := embedAsync(b, t.Context(), "a")
	wait(t, g.entered, "the first call")
	ctx, cancel := context.WithCancel(t.Context())
	gone := embedAsync(b, ctx, "b")
	cancel()
	if r := wait(t, gone, "the canceled caller"); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("canceled caller: %v", r.err)
	}
	second := embedAsync(b, t.Context(), "c")
	close(g.gate)
	for _, ch := range []<-chan embedded{first, second} {
		if r := wait(t, ch, "a caller"); r.err == nil || r.err.Error() != "model down" {
			t.Fatalf("caller %v: %v, want the model's error", r.texts, r.err)
		}
	}
}
