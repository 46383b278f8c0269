// Package embedding is an OpenAI-compatible embeddings client: POST
// {model, input} to an endpoint, read data[i].embedding. It implements
// membrane.Embedder for optional vector search.
package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

var _ membrane.Embedder = (*Client)(nil)

// Defaults and bounds.
const (
	DefaultTimeout = 10 * time.Second
	// MaxInputBytes bounds each text sent (longer texts are cut at a rune
	// boundary): embedding models take a few thousand tokens at most.
	MaxInputBytes = 8000
	// MaxBatch bounds the texts of one request.
	MaxBatch = 256
)

// Config says how to reach the embedding service.
type Config struct {
	// Endpoint is the full URL, e.g. https://api.openai.com/v1/embeddings.
	Endpoint string
	Model    string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Dimensions is the length of every vector (it sizes the vector index);
	// a response of another length is an error.
	Dimensions int
	// SendDimensions adds "dimensions" to requests (models that can
	// shorten their vectors, like OpenAI's text-embedding-3).
	SendDimensions bool
	// Timeout bounds one request (DefaultTimeout when 0).
	Timeout time.Duration
}

// Client calls the embedding service. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
}

// New validates cfg and returns a client.
func New(cfg Config) (*Client, error) {
	switch {
	case cfg.Endpoint == "":
		return nil, errors.New("embedding: endpoint is required")
	case cfg.Model == "":
		return nil, errors.New("embedding: model is required")
	case cfg.Dimensions < 1 || cfg.Dimensions > 4096:
		return nil, fmt.Errorf("embedding: dimensions must be 1 to 4096, got %d", cfg.Dimensions)
	case cfg.Timeout < 0:
		return nil, errors.New("embedding: timeout must be >= 0")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Client{cfg: cfg, http: &http.Client{Timeout: cfg.Timeout}}, nil
}

// Dimensions implements membrane.Embedder.
func (c *Client) Dimensions() int { return c.cfg.Dimensions }

// Model implements membrane.Embedder.
func (c *Client) Model() string { return c.cfg.Model }

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// maxResponseBytes bounds a response: room for n vectors of the configured
// length written out in full (about 25 bytes a number) plus envelope.
func (c *Client) maxResponseBytes(n int) int64 {
	return int64(64<<10 + n*(c.cfg.Dimensions*26+256))
}

// Embed returns one vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if len(texts) > MaxBatch {
		return nil, fmt.Errorf("embedding: %d texts in one request (max %d)", len(texts), MaxBatch)
	}
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = membrane.CutBytes(t, MaxInputBytes)
	}
	req := request{Model: c.cfg.Model, Input: in}
	if c.cfg.SendDimensions {
		req.Dimensions = c.cfg.Dimensions
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("embedding: encode request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	defer resp.Body.Close()
	limit := c.maxResponseBytes(len(texts))
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("embedding: read response: %w", err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("embedding: response exceeds %d bytes", limit)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embedding: status %d: %.300s", resp.StatusCode, raw)
	}
	var out response
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("embedding: decode response: %w", err)
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("embedding: %d vectors for %d texts", len(out.Data), len(texts))
	}
	vecs := make([][]float64, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("embedding: bad or repeated index %d", d.Index)
		}
		if len(d.Embedding) != c.cfg.Dimensions {
			return nil, fmt.Errorf("embedding: vector of %d dimensions, configured %d", len(d.Embedding), c.cfg.Dimensions)
		}
		for _, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, errors.New("embedding: vector has a non-finite number")
			}
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, nil
}
