package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Client sends GraphQL operations to one server as a well-behaved client
// does: one keep-alive connection pool, and automatic persisted queries
// (after its first use, a query travels as its hash, and the server skips
// parsing and validating it).
type Client struct {
	// URL is the GraphQL endpoint (http://host:port/graphql).
	URL string
	// Key is the API key sent as a bearer token; empty in dev mode.
	Key  string
	HTTP *http.Client

	known sync.Map // sha256 hex of a query the server has stored -> true
}

// NewClient returns a client of url with key and a connection pool sized
// for clients concurrent callers.
func NewClient(url, key string, clients int) *Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(clients, 2)
	return &Client{URL: url, Key: key, HTTP: &http.Client{Transport: t}}
}

// GraphQLError is an error the server answered with.
type GraphQLError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func (e GraphQLError) Error() string {
	return fmt.Sprintf("%v: %s", e.Extensions["code"], e.Message)
}

// Do runs query with vars and decodes the response's data into out (when
// not nil). An error of the server, a status other than 200 or an
// undecodable answer is an error.
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	sum := sha256.Sum256([]byte(query))
	hash := hex.EncodeToString(sum[:])
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
	req := map[string]any{"variables": vars, "extensions": ext}
	if _, ok := c.known.Load(hash); !ok {
		req["query"] = query // registers it
	}
	err := c.post(ctx, req, out)
	if ge, ok := err.(GraphQLError); ok && ge.Extensions["code"] == "PERSISTED_QUERY_NOT_FOUND" {
		// The server forgot it (a restart, its bounded cache): register again.
		req["query"] = query
		err = c.post(ctx, req, out)
	}
	if err == nil {
		c.known.Store(hash, true)
	}
	return err
}

func (c *Client) post(ctx context.Context, req map[string]any, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return Post(ctx, c.HTTP, c.URL, c.Key, body, out)
}

// Post sends a GraphQL request body, marshalled beforehand (outside a
// timed loop), to the endpoint url with hc and key (a bearer token, when
// not empty), and decodes the response's data into out (when not nil).
// The server's first error (a GraphQLError), a status other than 200 or
// an undecodable answer is an error.
func Post(ctx context.Context, hc *http.Client, url, key string, body []byte, out any) error {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	if key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		return r.Errors[0]
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}
