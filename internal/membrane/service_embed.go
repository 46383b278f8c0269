package membrane

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// embedBatch is how many texts go to the embedder per call.
const embedBatch = 256

// embedding embeds new records and retrieval queries for the services.
// Embedding never fails a request: without an embedder, or when it fails
// (logged), records are written without vectors and found by full text
// alone, and retrieval ranks by full text (and says so in vectorUsed).
// It runs before a write's transaction: no network call ever runs inside
// one.
type embedding struct {
	embedder Embedder
	// max is the most sensitive level whose records are embedded.
	max Sensitivity
	log *slog.Logger
	// background, when set, embeds new records after their write instead
	// (written); capture and ingested then do nothing.
	background *vectorWriter
}

// written hands the records a write created to the background writer.
func (e embedding) written(recs ...*Record) {
	if e.background != nil {
		e.background.add(recs...)
	}
}

// texts embeds texts in batches; nil when embedding failed.
func (e embedding) texts(ctx context.Context, texts []string) [][]float64 {
	out := make([][]float64, 0, len(texts))
	for batch := range slices.Chunk(texts, embedBatch) {
		vecs, err := e.embedder.Embed(ctx, batch)
		if err != nil || len(vecs) != len(batch) {
			e.log.WarnContext(ctx, "embedding failed; records are written without vectors", "err", err, "texts", len(texts))
			return nil
		}
		out = append(out, vecs...)
	}
	return out
}

// capture gives a capture the vectors of its records.
func (e embedding) capture(ctx context.Context, c *Capture) {
	if e.embedder == nil || e.background != nil || !Embeddable(c.Primary, e.max) {
		return
	}
	texts := c.EmbedTexts()
	keys := slices.Sorted(maps.Keys(texts))
	list := make([]string, len(keys))
	for i, k := range keys {
		list[i] = texts[k]
	}
	vecs := e.texts(ctx, list)
	if vecs == nil {
		return
	}
	byKey := make(map[string][]float64, len(keys))
	for i, k := range keys {
		byKey[k] = vecs[i]
	}
	c.SetEmbeddings(byKey, e.embedder.Model())
}

// ingested gives new records their vectors before they are written.
func (e embedding) ingested(ctx context.Context, batch []*Ingested) {
	if e.embedder == nil || e.background != nil {
		return
	}
	var todo []*Ingested
	var texts []string
	for _, in := range batch {
		if Embeddable(in.Record, e.max) {
			todo = append(todo, in)
			texts = append(texts, EmbedText(in.Record))
		}
	}
	if len(texts) == 0 {
		return
	}
	if vecs := e.texts(ctx, texts); vecs != nil {
		for i, in := range todo {
			in.Embedding, in.EmbeddingModel = vecs[i], e.embedder.Model()
		}
	}
}

// QueryEmbedTimeout bounds the embedding of a retrieval's query: a slow
// embedder costs a retrieval at most this before it ranks by full text.
const QueryEmbedTimeout = 2 * time.Second

// WarnNoVector is the warning a retrieval carries when its query could
// not be embedded. It names no cause: the embedder's error (an address, a
// status) is the operator's, in the log.
const WarnNoVector = "vector search is unavailable for this query (the embedding model failed or was too slow): ranked by full text and the graph only"

// query returns a retrieval query's embedding, or nil without an embedder
// or query; and nil with a warning for the caller when embedding fails or
// takes more than QueryEmbedTimeout.
func (e embedding) query(ctx context.Context, text string) (vec []float64, warning string) {
	if e.embedder == nil || text == "" {
		return nil, ""
	}
	ectx, cancel := context.WithTimeout(ctx, QueryEmbedTimeout)
	defer cancel()
	vecs, err := e.embedder.Embed(ectx, []string{text})
	if err != nil || len(vecs) != 1 {
		e.log.WarnContext(ctx, "query embedding failed; ranking by full text only", "err", err)
		return nil, WarnNoVector
	}
	return vecs[0], ""
}
