package http_test

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/web"
)

// TestGraphiQLPageIsOffline: the GraphiQL page names no URL of another
// host, and every script and stylesheet it loads is served by the server
// itself, with the integrity the page names.
func TestGraphiQLPageIsOffline(t *testing.T) {
	c := gqltest.NewOpts(t, membranehttp.DefaultHandlerOptions())
	page := c.Send(http.MethodGet, "/", nil, nil)
	if page.Status != http.StatusOK {
		t.Fatalf("GET /: %d", page.Status)
	}
	if external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`).FindAll(page.Body, -1); len(external) > 0 {
		t.Fatalf("the page names other hosts: %q", external)
	}
	loads := regexp.MustCompile(`(?s)(?:src|href)="([^"]+)"\s+integrity="([^"]+)"`).FindAllSubmatch(page.Body, -1)
	if len(loads) != 4 { // react, react-dom, graphiql's script and stylesheet
		t.Fatalf("the page loads %d scripts and stylesheets, want 4:\n%s", len(loads), page.Body)
	}
	for _, l := range loads {
		path, integrity := html.UnescapeString(string(l[1])), html.UnescapeString(string(l[2]))
		if !strings.HasPrefix(path, "/assets/vendor/") {
			t.Errorf("the page loads %s", path)
			continue
		}
		r := c.Send(http.MethodGet, path, nil, nil)
		sum := sha256.Sum256(r.Body)
		if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); r.Status != http.StatusOK || got != integrity {
			t.Errorf("GET %s: %d, integrity %s, the page says %s", path, r.Status, got, integrity)
		}
	}
}

// TestVendoredAssetsAreGqlgens: each vendored file is, byte for byte, the
// one gqlgen's GraphiQL page loads from the CDN (the same package and
// version, by the integrity gqlgen pins), since the page is gqlgen's and
// written for those versions. When gqlgen moves to new versions, this
// fails until web/vendor follows (web/vendor/README.md).
func TestVendoredAssetsAreGqlgens(t *testing.T) {
	rec := httptest.NewRecorder()
	playground.Handler("x", "/graphql").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	// e.g. https://cdn.jsdelivr.net/npm/graphiql@4.1.2/graphiql.min.js
	cdn := regexp.MustCompile(`(?s)(?:src|href)="https://cdn\.jsdelivr\.net/npm/([^@"]+)@([^/"]+)/(?:umd/)?([^"]+)"\s+integrity="([^"]+)"`)
	found := cdn.FindAllStringSubmatch(rec.Body.String(), -1)
	if len(found) != 4 {
		t.Fatalf("gqlgen's page loads %d files from jsDelivr, want 4", len(found))
	}
	for _, f := range found {
		pkg, version, file, integrity := f[1], f[2], f[3], html.UnescapeString(f[4])
		path := "vendor/" + pkg + "-" + version + "/" + file
		b, err := fs.ReadFile(web.FS, path)
		if err != nil {
			t.Errorf("gqlgen's page loads %s@%s/%s: %v", pkg, version, file, err)
			continue
		}
		sum := sha256.Sum256(b)
		if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
			t.Errorf("%s: %s, gqlgen pins %s", path, got, integrity)
		}
	}
}

// TestAssets: how /assets/ serves embedded files, and that it is served
// only while GraphiQL is.
func TestAssets(t *testing.T) {
	const js = "/assets/vendor/react-18.2.0/react.production.min.js"
	c := gqltest.NewOpts(t, membranehttp.DefaultHandlerOptions())
	first := c.Send(http.MethodGet, js, nil, nil)
	etag := first.Header.Get("ETag")
	tests := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		wantStatus int
		wantHeader map[string]string
		wantBody   bool // of a success
	}{
		{"a vendored file", http.MethodGet, js, nil, http.StatusOK, map[string]string{
			"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=31536000, immutable",
			"X-Content-Type-Options": "nosniff"}, true},
		{"a stylesheet", http.MethodGet, "/assets/vendor/graphiql-4.1.2/graphiql.min.css", nil, http.StatusOK,
			map[string]string{"Content-Type": "text/css; charset=utf-8"}, true},
		{"revalidated", http.MethodGet, js, map[string]string{"If-None-Match": etag}, http.StatusNotModified, nil, false},
		{"HEAD", http.MethodHead, js, nil, http.StatusOK, map[string]string{"ETag": etag}, false},
		{"POST", http.MethodPost, js, nil, http.StatusMethodNotAllowed, map[string]string{"Allow": "GET, HEAD"}, false},
		{"a directory", http.MethodGet, "/assets/vendor/", nil, http.StatusNotFound, nil, false},
		{"the root", http.MethodGet, "/assets/", nil, http.StatusNotFound, nil, false},
		{"a missing file", http.MethodGet, "/assets/vendor/react-18.2.0/react.development.js", nil, http.StatusNotFound, nil, false},
		{"outside the tree", http.MethodGet, "/assets/../web.go", nil, http.StatusNotFound, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Send(tt.method, tt.path, nil, tt.header)
			if r.Status != tt.wantStatus {
				t.Fatalf("%s %s: %d, want %d", tt.method, tt.path, r.Status, tt.wantStatus)
			}
			for k, v := range tt.wantHeader {
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if got := len(r.Body) > 0; r.Status < 400 && got != tt.wantBody {
				t.Errorf("body of %d bytes", len(r.Body))
			}
		})
	}
	if etag == "" || len(first.Body) < 10000 {
		t.Fatalf("first GET: ETag %q, %d bytes", etag, len(first.Body))
	}

	// The explorer's page loads assets too (TestExplorerServed).
	t.Run("GraphiQL and the explorer off", func(t *testing.T) {
		opts := membranehttp.DefaultHandlerOptions()
		opts.GraphiQL, opts.Explorer = false, false
		off := gqltest.NewOpts(t, opts)
		if r := off.Send(http.MethodGet, js, nil, nil); r.Status != http.StatusNotFound {
			t.Fatalf("GET %s with GraphiQL and the explorer off: %d", js, r.Status)
		}
	})
}
