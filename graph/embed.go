package graph

import (
	"context"
	"slices"

	"github.com/membrane/membrane/internal/membrane"
)

// embedBatch is how many texts go to the embedder per call.
const embedBatch = 256

// embedMax is the most sensitive level whose records are embedded.
func (r *Resolver) embedMax() membrane.Sensitivity {
	if r.EmbedMaxSensitivity != "" {
		return r.EmbedMaxSensitivity
	}
	return membrane.SensitivityMedium
}

// embedTexts embeds texts in batches. Failures are logged and give no
// vectors: the records are written and found by full text alone.
func (r *Resolver) embedTexts(ctx context.Context, texts []string) [][]float64 {
	out := make([][]float64, 0, len(texts))
	for batch := range slices.Chunk(texts, embedBatch) {
		vecs, err := r.Embedder.Embed(ctx, batch)
		if err != nil || len(vecs) != len(batch) {
			r.logger().WarnContext(ctx, "embedding failed; records are written without vectors", "err", err, "texts", len(texts))
			return nil
		}
		out = append(out, vecs...)
	}
	return out
}

// embedCapture gives a capture the vectors of its records, before its
// transaction (no network call ever runs inside one).
func (r *Resolver) embedCapture(ctx context.Context, c *membrane.Capture) {
	if r.Embedder == nil || !membrane.Embeddable(c.Primary, r.embedMax()) {
		return
	}
	texts := c.EmbedTexts()
	keys := make([]string, 0, len(texts))
	for k := range texts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	list := make([]string, len(keys))
	for i, k := range keys {
		list[i] = texts[k]
	}
	vecs := r.embedTexts(ctx, list)
	if vecs == nil {
		return
	}
	byKey := make(map[string][]float64, len(keys))
	for i, k := range keys {
		byKey[k] = vecs[i]
	}
	c.SetEmbeddings(byKey, r.Embedder.Model())
}

// embedIngested gives new records their vectors before they are written.
func (r *Resolver) embedIngested(ctx context.Context, batch []*membrane.Ingested) {
	if r.Embedder == nil {
		return
	}
	var todo []*membrane.Ingested
	var texts []string
	for _, in := range batch {
		if membrane.Embeddable(in.Record, r.embedMax()) {
			todo = append(todo, in)
			texts = append(texts, membrane.EmbedText(in.Record))
		}
	}
	if len(texts) == 0 {
		return
	}
	if vecs := r.embedTexts(ctx, texts); vecs != nil {
		for i, in := range todo {
			in.Embedding, in.EmbeddingModel = vecs[i], r.Embedder.Model()
		}
	}
}
