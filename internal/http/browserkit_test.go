package http_test

import (
	"context"
	"crypto/sha256"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/graph"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
)

type upPinger struct{}

func (upPinger) Ping(context.Context) error { return nil }

// TestBrowserKit: the Neo4j Browser stylesheet and guide are served without
// a key, readable by Browser from its own origin (CORS, preflight
// included), also when the API's CORS allows other origins only, and in
// production mode; the stylesheet captions by the caption property and
// dims bookkeeping; the guide has a runnable slide for every analyst
// query, with its :param lines, and loads the stylesheet from this server.
func TestBrowserKit(t *testing.T) {
	const browser = "http://127.0.0.1:7474"
	key := membrane.APIKey{SHA256: sha256.Sum256([]byte("k")), Principal: membrane.Principal{Actor: "a", Role: membrane.RoleReader}}
	prod := membranehttp.DefaultHandlerOptions()
	prod.GraphiQL, prod.Introspection = false, false
	prod.CORS.AllowedOrigins = []string{"https://dashboard.example.com"}
	handlers := []struct {
		name string
		keys []membrane.APIKey
		opts []membranehttp.HandlerOptions
	}{
		{"dev mode", nil, nil},
		{"keys, production, CORS for another origin", []membrane.APIKey{key}, []membranehttp.HandlerOptions{prod}},
	}
	requests := []struct {
		name, method, path string
		status             int
		contentType        string
		body               []string
	}{
		{"stylesheet", http.MethodGet, "/browser/style.grass", http.StatusOK, "text/plain",
			[]string{"caption: '{caption}'", "node.Bookkeeping {", "node.AuditEntry {", "node.Semantic {"}},
		{"guide", http.MethodGet, "/browser/guide.html", http.StatusOK, "text/html", nil},
		{"preflight", http.MethodOptions, "/browser/guide.html", http.StatusNoContent, "", nil},
		{"unknown", http.MethodGet, "/browser/other", http.StatusNotFound, "", nil},
	}
	for _, hc := range handlers {
		srv := httptest.NewServer(membranehttp.NewHandler(&graph.Resolver{}, upPinger{}, membrane.NewKeyring(hc.keys),
			slog.New(slog.NewTextHandler(io.Discard, nil)), hc.opts...))
		t.Cleanup(srv.Close)
		for _, rc := range requests {
			t.Run(hc.name+"/"+rc.name, func(t *testing.T) {
				req, _ := http.NewRequest(rc.method, srv.URL+rc.path, nil)
				req.Header.Set("Origin", browser)
				if rc.method == http.MethodOptions {
					req.Header.Set("Access-Control-Request-Method", http.MethodGet)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				body := string(b)
				if resp.StatusCode != rc.status {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, rc.status, body)
				}
				if rc.status == http.StatusNotFound {
					return
				}
				if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" && got != browser {
					t.Errorf("Access-Control-Allow-Origin %q: Browser at %s cannot read it", got, browser)
				}
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), rc.contentType) {
					t.Errorf("Content-Type %q, want %s", resp.Header.Get("Content-Type"), rc.contentType)
				}
				for _, want := range rc.body {
					if !strings.Contains(body, want) {
						t.Errorf("no %q in:\n%s", want, body)
					}
				}
				if rc.name != "guide" {
					return
				}
				text := html.UnescapeString(body)
				if want := ":style " + srv.URL + "/browser/style.grass"; !strings.Contains(text, want) {
					t.Errorf("guide does not run %q", want)
				}
				if n := strings.Count(body, "<slide "); n != len(cypher.Analyst())+1 {
					t.Errorf("%d slides, want one per analyst query and an introduction", n)
				}
				for name, q := range cypher.Analyst() {
					for _, line := range strings.Split(q, "\n") {
						line = strings.TrimSpace(line)
						if p, ok := strings.CutPrefix(line, "// :param"); ok {
							line = ":param" + p
						} else if strings.HasPrefix(line, "//") {
							continue
						}
						if !strings.Contains(text, line) {
							t.Errorf("guide lacks %s's line %q", name, line)
						}
					}
				}
			})
		}
	}
}
