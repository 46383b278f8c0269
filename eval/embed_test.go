package eval_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/membrane/membrane/internal/embedding"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// embedderDims are the dimensions of the offline embedder
// (all-MiniLM-L6-v2, inside Neo4j).
const embedderDims = 384

// evalEmbedder is the embedder the evals run with, as the server picks
// it by default: the OpenAI-compatible endpoint in MEMBRANE_EVAL_EMBEDDER
// when set (of embedderDims dimensions), else the model inside Neo4j
// (scripts/neo4j.sh installs it). Without either it returns nil and the
// vectors configuration is skipped, except in CI (CI=true), where the
// test Neo4j must have the model: it fails. Records are embedded before
// they are written and every query is embedded, as the server does.
func evalEmbedder(t *testing.T, db *neo4j.DB) membrane.Embedder {
	if url := os.Getenv("MEMBRANE_EVAL_EMBEDDER"); url != "" {
		c, err := embedding.New(embedding.Config{Endpoint: url, Model: "all-minilm-l6-v2-q", Dimensions: embedderDims})
		if err != nil {
			t.Fatal(err)
		}
		ensureVectorIndex(t, db, c)
		return c
	}
	e, err := db.InDatabaseEmbedder(t.Context())
	switch {
	case errors.Is(err, neo4j.ErrNoEmbedder) && os.Getenv("CI") != "true":
		return nil
	case err != nil:
		t.Fatalf("the evals need the embedding model inside Neo4j in CI: %v", err)
	}
	ensureVectorIndex(t, db, e)
	return e
}

func ensureVectorIndex(t *testing.T, db *neo4j.DB, e membrane.Embedder) {
	if err := db.EnsureVectorIndex(t.Context(), e.Dimensions()); err != nil {
		t.Fatal(err)
	}
}

// embedBatch gives the batch's records their vectors (membrane.EmbedText,
// the text the server embeds).
func embedBatch(t *testing.T, e membrane.Embedder, batch []*membrane.Ingested) {
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
func embedQuery(t *testing.T, e membrane.Embedder, q *membrane.RetrieveQuery) {
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
	// target: the targets are gates, not only checked with
	// MEMBRANE_EVAL_TARGET.
	target bool
	// skip says why the configuration cannot run here.
	skip string
}

// configurations are full text and graph alone, and with the offline
// model's vectors (skipped without an embedder outside CI; the test Neo4j
// of scripts/test.sh has the model, so CI runs both).
func configurations(emb membrane.Embedder) []configuration {
	vectors := configuration{name: "vectors", vectors: true, target: true}
	if emb == nil {
		vectors.skip = "no embedder: Neo4j has no membrane.embed (scripts/neo4j.sh installs it) and MEMBRANE_EVAL_EMBEDDER is not set"
	}
	return []configuration{{name: "text"}, vectors}
}
