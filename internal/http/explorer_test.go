package http_test

import (
	"bytes"
	"io/fs"
	"net/http"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/web"
)

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
