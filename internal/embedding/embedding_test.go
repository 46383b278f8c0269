package embedding_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/embedding"
)

// fake is an OpenAI-compatible embedding server whose vectors are a
// deterministic function of the text: [len(text), index, 1, 0...].
type fake struct {
	mu       sync.Mutex
	t        *testing.T
	dims     int
	requests []map[string]any
	auth     string
	respond  func(w http.ResponseWriter, r *http.Request, input []string) bool
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("decode request: %v", err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.auth = r.Header.Get("Authorization")
	f.mu.Unlock()
	var input []string
	for _, x := range req["input"].([]any) {
		input = append(input, x.(string))
	}
	if f.respond != nil && f.respond(w, r, input) {
		return
	}
	data := make([]map[string]any, len(input))
	for i, s := range input {
		v := make([]float64, f.dims)
		v[0], v[1], v[2] = float64(len(s)), float64(i), 1
		// answered out of order: the client must use index
		data[len(input)-1-i] = map[string]any{"index": i, "embedding": v, "object": "embedding"}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req["model"]})
}

func start(t *testing.T, f *fake, cfg embedding.Config) *embedding.Client {
	t.Helper()
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.Endpoint = srv.URL + "/v1/embeddings"
	c, err := embedding.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmbed(t *testing.T) {
	f := &fake{dims: 4}
	c := start(t, f, embedding.Config{Model: "m-1", APIKey: "secret", Dimensions: 4, SendDimensions: true})
	long := strings.Repeat("é", embedding.MaxInputBytes) // 2 bytes a rune
	vecs, err := c.Embed(context.Background(), []string{"ab", "hello", long})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{2, 0, 1, 0}, {5, 1, 1, 0}, {embedding.MaxInputBytes, 2, 1, 0}}
	if fmt.Sprint(vecs) != fmt.Sprint(want) {
		t.Errorf("vectors %v, want %v", vecs, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	req := f.requests[0]
	if req["model"] != "m-1" || req["dimensions"] != 4.0 || f.auth != "Bearer secret" || len(req["input"].([]any)) != 3 {
		t.Errorf("request %v auth %q", req, f.auth)
	}
	if c.Dimensions() != 4 || c.Model() != "m-1" {
		t.Errorf("dims %d model %s", c.Dimensions(), c.Model())
	}
	// Without SendDimensions and a key, neither is sent.
	f2 := &fake{dims: 3}
	c2 := start(t, f2, embedding.Config{Model: "m", Dimensions: 3})
	if _, err := c2.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	f2.mu.Lock()
	defer f2.mu.Unlock()
	if _, ok := f2.requests[0]["dimensions"]; ok || f2.auth != "" {
		t.Errorf("request %v auth %q", f2.requests[0], f2.auth)
	}
	if v, err := c2.Embed(context.Background(), nil); v != nil || err != nil || len(f2.requests) != 1 {
		t.Errorf("no texts: %v %v, %d requests", v, err, len(f2.requests))
	}
}

func TestEmbedErrors(t *testing.T) {
	reply := func(status int, body string) func(http.ResponseWriter, *http.Request, []string) bool {
		return func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return true
		}
	}
	tests := []struct {
		name    string
		respond func(http.ResponseWriter, *http.Request, []string) bool
		want    string
	}{
		{"status", reply(429, `{"error":"rate limited"}`), "status 429"},
		{"not JSON", reply(200, `<html>`), "decode response"},
		{"too few vectors", reply(200, `{"data":[{"index":0,"embedding":[1,2,3]}]}`), "1 vectors for 2 texts"},
		{"wrong length", reply(200, `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2]}]}`), "2 dimensions, configured 3"},
		{"repeated index", reply(200, `{"data":[{"index":0,"embedding":[1,2,3]},{"index":0,"embedding":[1,2,3]}]}`), "repeated index 0"},
		{"oversized", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			fmt.Fprint(w, `{"data":[`+strings.Repeat(" ", 1<<20)+`]}`)
			return true
		}, "response exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, &fake{dims: 3, respond: tt.respond}, embedding.Config{Model: "m", Dimensions: 3})
			_, err := c.Embed(context.Background(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		c := start(t, &fake{dims: 3, respond: func(w http.ResponseWriter, r *http.Request, _ []string) bool {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return true
		}}, embedding.Config{Model: "m", Dimensions: 3, Timeout: 50 * time.Millisecond})
		_, err := c.Embed(context.Background(), []string{"a"})
		if err == nil || !strings.Contains(err.Error(), "Timeout") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("too many texts", func(t *testing.T) {
		c := start(t, &fake{dims: 3}, embedding.Config{Model: "m", Dimensions: 3})
		if _, err := c.Embed(context.Background(), make([]string, embedding.MaxBatch+1)); err == nil {
			t.Error("no error")
		}
	})
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []embedding.Config{
		{Model: "m", Dimensions: 3},
		{Endpoint: "http://x", Dimensions: 3},
		{Endpoint: "http://x", Model: "m"},
		{Endpoint: "http://x", Model: "m", Dimensions: 5000},
		{Endpoint: "http://x", Model: "m", Dimensions: 3, Timeout: -1},
	} {
		if _, err := embedding.New(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
