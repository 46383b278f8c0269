package neo4j

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
)

// Bounds of the in-database embedder's calls.
const (
	// EmbedBatch is how many texts one statement embeds: the model runs
	// them in batches inside Neo4j, and a bigger call only holds its
	// transaction open longer (256 short texts take about half a second on
	// 2 cores).
	EmbedBatch = 256
	// MaxEmbedTextBytes bounds each text sent (longer texts are cut at a
	// rune boundary): the model reads the first 256 tokens, a few KB of
	// text, so the rest would only cross the connection for nothing.
	MaxEmbedTextBytes = 32 << 10
)

// ErrNoEmbedder is InDatabaseEmbedder's answer when Neo4j does not have the
// embedding functions: started with NEO4J_EMBED=off, or an image without
// the plugin.
var ErrNoEmbedder = membrane.Errorf(membrane.ENOTFOUND,
	"Neo4j has no membrane.embed function: install tools/neo4j-embed's plugin (scripts/neo4j.sh does unless NEO4J_EMBED=off; the compose file's image has it)")

// probeText is what InDatabaseEmbedder embeds to learn the vectors' length.
const probeText = "membrane embedder probe"

// Embedder implements membrane.Embedder with the embedding model inside
// Neo4j (the membrane.embed function of tools/neo4j-embed), through the
// store's driver: vector search with no embedding service to run beside
// Neo4j, and no text leaving for one. It is safe for concurrent use. Get
// one from DB.InDatabaseEmbedder.
type Embedder struct {
	db    *DB
	model string
	dims  int
}

var _ membrane.Embedder = (*Embedder)(nil)

// InDatabaseEmbedder returns the embedder inside Neo4j, with the model name
// and vector length it reports, or ErrNoEmbedder when Neo4j does not have
// its functions. It embeds one text to learn the length, which also loads
// the model (about a second, once per Neo4j process): a model that cannot
// run fails here, not on the first write.
func (db *DB) InDatabaseEmbedder(ctx context.Context) (*Embedder, error) {
	names, err := readOnce(ctx, db, func(tx runner) ([]any, error) {
		row, err := single(ctx, tx, cypher.Must("embed_functions"), nil)
		if err != nil || row == nil {
			return nil, err
		}
		names, _ := row.Values[0].([]any)
		return names, nil
	})
	if err != nil {
		return nil, fmt.Errorf("in-database embedder: %w", err)
	}
	if !slices.Contains(names, any("membrane.embed")) || !slices.Contains(names, any("membrane.embedModel")) {
		return nil, ErrNoEmbedder
	}
	type probe struct {
		model string
		dims  int64
	}
	p, err := readOnce(ctx, db, func(tx runner) (probe, error) {
		row, err := single(ctx, tx, cypher.Must("embed_probe"), map[string]any{"texts": []string{probeText}})
		if err != nil || row == nil {
			return probe{}, err
		}
		model, _ := row.Values[0].(string)
		dims, _ := row.Values[1].(int64)
		return probe{model, dims}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("in-database embedder: %w", err)
	}
	if p.model == "" || p.dims < 1 || p.dims > 4096 {
		return nil, fmt.Errorf("in-database embedder: the plugin reports model %q with %d dimensions", p.model, p.dims)
	}
	return &Embedder{db: db, model: p.model, dims: int(p.dims)}, nil
}

// Dimensions implements membrane.Embedder.
func (e *Embedder) Dimensions() int { return e.dims }

// Model implements membrane.Embedder: the name the plugin reports.
func (e *Embedder) Model() string { return e.model }

// Embed returns one vector per text, in order, embedding EmbedBatch texts
// per statement, each in a read-only auto-commit transaction under ctx's
// deadline. A blank text has no vector: it is an EINVALID error (callers
// embed only records and queries with text).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	out := make([][]float64, 0, len(texts))
	for batch := range slices.Chunk(texts, EmbedBatch) {
		vecs, err := e.embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		for i, v := range vecs {
			if len(v) == 0 {
				return nil, membrane.Errorf(membrane.EINVALID, "in-database embedder: text %d is blank; there is nothing to embed", len(out)+i)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embed runs one statement for at most EmbedBatch texts.
func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float64, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = membrane.CutBytes(t, MaxEmbedTextBytes)
	}
	vecs, err := readOnce(ctx, e.db, func(tx runner) ([]any, error) {
		row, err := single(ctx, tx, cypher.Must("embed"), map[string]any{"texts": in})
		if err != nil || row == nil {
			return nil, err
		}
		vecs, _ := row.Values[0].([]any)
		return vecs, nil
	})
	if err != nil {
		return nil, fmt.Errorf("in-database embedder: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("in-database embedder: %d vectors for %d texts", len(vecs), len(texts))
	}
	out := make([][]float64, len(vecs))
	for i, v := range vecs {
		nums, _ := v.([]any)
		if len(nums) == 0 {
			continue // blank: Embed says so
		}
		if len(nums) != e.dims {
			return nil, fmt.Errorf("in-database embedder: vector of %d dimensions, the model has %d", len(nums), e.dims)
		}
		vec := make([]float64, len(nums))
		for j, x := range nums {
			f, ok := x.(float64)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("in-database embedder: vector %d has a non-finite or non-float number", i)
			}
			vec[j] = f
		}
		out[i] = vec
	}
	return out, nil
}
