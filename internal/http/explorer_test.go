package http_test

import (
	"bytes"
	"io/fs"
	"net/http"
	"testing"

	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/web/explorer"
)

// TestExplorerServed: the explorer's embedded files are served under
// /explorer/ with their content types and the Content-Security-Policy that
// keeps the page on the server's own origin; /explorer redirects to it;
// nothing else is served there (no directory listing, no other method);
// and with the option off, none of it is served while GraphiQL stays.
func TestExplorerServed(t *testing.T) {
	on := newClient(t)
	offOpts := membranehttp.DefaultHandlerOptions()
	offOpts.Explorer = false
	off := newClientOpts(t, offOpts)
	// No redirects followed: the redirect itself is checked.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	embedded := func(name string) []byte {
		b, err := fs.ReadFile(explorer.Files, name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name, method, path string
		status             int
		contentType        string
		body               []byte // nil: not compared
	}{
		{"page", http.MethodGet, "/explorer/", http.StatusOK, "text/html; charset=utf-8", embedded("index.html")},
		{"script", http.MethodGet, "/explorer/explorer.js", http.StatusOK, "text/javascript; charset=utf-8", embedded("explorer.js")},
		{"stylesheet", http.MethodGet, "/explorer/explorer.css", http.StatusOK, "text/css; charset=utf-8", embedded("explorer.css")},
		{"cytoscape", http.MethodGet, "/explorer/vendor/cytoscape/cytoscape.min.js", http.StatusOK, "text/javascript; charset=utf-8",
			embedded("vendor/cytoscape/cytoscape.min.js")},
		{"licence", http.MethodGet, "/explorer/vendor/cytoscape/LICENSE", http.StatusOK, "text/plain; charset=utf-8", nil},
		{"head", http.MethodHead, "/explorer/", http.StatusOK, "text/html; charset=utf-8", nil},
		{"no listing", http.MethodGet, "/explorer/vendor/", http.StatusNotFound, "", nil},
		{"no such file", http.MethodGet, "/explorer/cdn.js", http.StatusNotFound, "", nil},
		{"Go source is not embedded", http.MethodGet, "/explorer/explorer.go", http.StatusNotFound, "", nil},
		{"post", http.MethodPost, "/explorer/", http.StatusMethodNotAllowed, "", nil},
		{"bare path redirects", http.MethodGet, "/explorer", http.StatusTemporaryRedirect, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, on.url+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			_, _ = body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tt.status, body.Bytes())
			}
			if tt.status == http.StatusTemporaryRedirect {
				if loc := resp.Header.Get("Location"); loc != "/explorer/" {
					t.Fatalf("Location %q", loc)
				}
				return
			}
			if tt.status != http.StatusOK {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != tt.contentType {
				t.Errorf("Content-Type %q, want %q", ct, tt.contentType)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); csp != explorer.ContentSecurityPolicy {
				t.Errorf("Content-Security-Policy %q", csp)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no nosniff: %v", resp.Header)
			}
			if tt.body != nil && !bytes.Equal(body.Bytes(), tt.body) {
				t.Errorf("body is not the embedded file (%d bytes, want %d)", body.Len(), len(tt.body))
			}

			// Off: the same request finds nothing.
			if got := off.send(tt.method, tt.path, nil, nil); got.status != http.StatusNotFound {
				t.Errorf("explorer off: %s %s: status %d, want 404", tt.method, tt.path, got.status)
			}
		})
	}
	if page := off.send(http.MethodGet, "/", nil, nil); page.status != http.StatusOK {
		t.Fatalf("explorer off: GraphiQL status %d", page.status)
	}
}
