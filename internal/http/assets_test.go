package http_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/membrane"
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

// TestExplorerServed: the explorer's page is served at /explorer/ with the
// Content-Security-Policy that keeps it on the server's own origin, and its
// script, stylesheet and Cytoscape.js below /assets/ with their content
// types; /explorer redirects to the page; nothing else is served under it.
// The explorer option decides, apart from GraphiQL's: off, none of it is
// served, its script, stylesheet and Cytoscape.js included while
// GraphiQL's assets are (they were all served then); on with GraphiQL
// off, the page and its assets still are, GraphiQL's not.
func TestExplorerServed(t *testing.T) {
	embedded := func(name string) []byte {
		b, err := fs.ReadFile(web.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type want struct {
		status      int
		contentType string
		body        []byte // nil: not compared
		csp         bool   // the page's policy
	}
	page := want{http.StatusOK, "text/html; charset=utf-8", embedded("explorer/index.html"), true}
	script := want{http.StatusOK, "text/javascript; charset=utf-8", embedded("explorer/explorer.js"), false}
	style := want{http.StatusOK, "text/css; charset=utf-8", embedded("explorer/explorer.css"), false}
	cytoscape := want{http.StatusOK, "text/javascript; charset=utf-8", embedded("vendor/cytoscape-3.34.4/cytoscape.min.js"), false}
	redirect := want{status: http.StatusMovedPermanently}
	notFound := want{status: http.StatusNotFound}
	notAllowed := want{status: http.StatusMethodNotAllowed}
	requests := []struct{ method, path string }{
		{http.MethodGet, "/explorer/"},
		{http.MethodGet, "/assets/explorer/explorer.js"},
		{http.MethodGet, "/assets/explorer/explorer.css"},
		{http.MethodGet, "/assets/vendor/cytoscape-3.34.4/cytoscape.min.js"},
		{http.MethodGet, "/explorer"},
		{http.MethodGet, "/explorer/explorer.js"},
		{http.MethodPost, "/explorer/"},
		{http.MethodGet, "/"},
		// The page only at its own route, with its policy: never as an asset.
		{http.MethodGet, "/assets/explorer/index.html"},
		// A library's licence is served with it; GraphiQL's script with GraphiQL.
		{http.MethodGet, "/assets/vendor/cytoscape-3.34.4/LICENSE"},
		{http.MethodGet, "/assets/vendor/graphiql-4.1.2/graphiql.min.js"},
	}
	graphiQL := want{status: http.StatusOK}
	licence := want{status: http.StatusOK}
	tests := []struct {
		name               string
		explorer, graphiql bool
		want               []want // by request
	}{
		{"on", true, true, []want{page, script, style, cytoscape, redirect, notFound, notAllowed, graphiQL, notFound, licence, graphiQL}},
		{"off", false, true, []want{notFound, notFound, notFound, notFound, notFound, notFound, notFound, graphiQL, notFound, notFound, graphiQL}},
		{"on without GraphiQL", true, false, []want{page, script, style, cytoscape, redirect, notFound, notAllowed, notFound, notFound, licence, notFound}},
		{"both off", false, false, []want{notFound, notFound, notFound, notFound, notFound, notFound, notFound, notFound, notFound, notFound, notFound}},
	}
	// No redirects followed: the redirect itself is checked.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := membranehttp.DefaultHandlerOptions()
			opts.Explorer, opts.GraphiQL = tt.explorer, tt.graphiql
			c := gqltest.NewOpts(t, opts)
			for i, r := range requests {
				w := tt.want[i]
				req, err := http.NewRequest(r.method, c.URL+r.path, nil)
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
				if resp.StatusCode != w.status {
					t.Errorf("%s %s: status %d, want %d: %.200s", r.method, r.path, resp.StatusCode, w.status, body.Bytes())
					continue
				}
				if w.status == http.StatusMovedPermanently {
					if loc := resp.Header.Get("Location"); loc != "/explorer/" {
						t.Errorf("%s %s: Location %q", r.method, r.path, loc)
					}
				}
				if w.contentType != "" && resp.Header.Get("Content-Type") != w.contentType {
					t.Errorf("%s %s: Content-Type %q, want %q", r.method, r.path, resp.Header.Get("Content-Type"), w.contentType)
				}
				if w.body != nil && !bytes.Equal(body.Bytes(), w.body) {
					t.Errorf("%s %s: body is not the embedded file (%d bytes, want %d)", r.method, r.path, body.Len(), len(w.body))
				}
				if csp := resp.Header.Get("Content-Security-Policy"); w.csp && csp != membranehttp.ExplorerContentSecurityPolicy {
					t.Errorf("%s %s: Content-Security-Policy %q", r.method, r.path, csp)
				}
				if w.body != nil && resp.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s %s: no nosniff: %v", r.method, r.path, resp.Header)
				}
			}
		})
	}
}

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
