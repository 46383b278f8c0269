package eval_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/embedding"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// embedderDims are the dimensions of the offline embedder
// (scripts/embedder.sh, all-MiniLM-L6-v2).
const embedderDims = 384

// evalEmbedder is the embedder the evals run with: the OpenAI-compatible
// endpoint in MEMBRANE_EVAL_EMBEDDER, of embedderDims dimensions (the
// offline one of scripts/embedder.sh), or nil: text and graph alone, as CI
// runs them. With it, records are embedded before they are written and
// every query is embedded, as the server does with embedding.endpoint set;
// the database must hold no vector index of other dimensions (the shared
// test database has the graph tests' 8: use a Neo4j of its own).
func evalEmbedder(t *testing.T, db *neo4j.DB) *embedding.Client {
	url := os.Getenv("MEMBRANE_EVAL_EMBEDDER")
	if url == "" {
		return nil
	}
	c, err := embedding.New(embedding.Config{Endpoint: url, Model: "all-minilm-l6-v2-q", Dimensions: embedderDims})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureVectorIndex(t.Context(), embedderDims); err != nil {
		t.Fatal(err)
	}
	return c
}

// embedBatch gives the batch's records their vectors (membrane.EmbedText,
// the text the server embeds).
func embedBatch(t *testing.T, e *embedding.Client, batch []*membrane.Ingested) {
	if e == nil {
		return
	}
	for chunk := range slices.Chunk(batch, 128) {
		texts := make([]string, len(chunk))
		for i, in := range chunk {
			texts[i] = membrane.EmbedText(in.Record)
		}
		vecs, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range chunk {
			in.Embedding, in.EmbeddingModel = vecs[i], e.Model()
		}
	}
}

// embedQuery sets q's vector from its text.
func embedQuery(t *testing.T, e *embedding.Client, q *membrane.RetrieveQuery) {
	if e == nil {
		return
	}
	vecs, err := e.Embed(context.Background(), []string{q.Text})
	if err != nil {
		t.Fatal(err)
	}
	q.Vector = vecs[0]
}

// configuration is one way the evals run retrieve.
type configuration struct {
	name string
	// vectors: queries carry their embedding (records always do when an
	// embedder is configured).
	vectors bool
	// target: issue 10's targets are gates, not only checked with
	// MEMBRANE_EVAL_TARGET.
	target bool
	// skip says why the configuration cannot run here.
	skip string
}

// configurations are full text and graph alone, and with the offline
// embedder's vectors (skipped without MEMBRANE_EVAL_EMBEDDER; scripts/test.sh
// starts the embedder and sets it, so CI runs both).
func configurations(emb *embedding.Client) []configuration {
	vectors := configuration{name: "vectors", vectors: true, target: true}
	if emb == nil {
		vectors.skip = "MEMBRANE_EVAL_EMBEDDER is not set (scripts/embedder.sh, docs/retrieval.md)"
	}
	return []configuration{{name: "text"}, vectors}
}
