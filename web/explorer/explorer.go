// Package explorer holds the lineage explorer's page, embedded in the
// binary: plain HTML, CSS and JavaScript over the GraphQL API, drawing
// with a vendored Cytoscape.js (vendor/cytoscape/VENDOR.md says which
// version, from where, under which licence). Nothing is fetched from
// another origin at run time: the page's Content-Security-Policy allows
// only the server's own.
package explorer

import (
	"embed"
	"net/http"
	"strings"
)

// Files are the explorer's assets, index.html at the root.
//
//go:embed index.html explorer.js explorer.css vendor/cytoscape/cytoscape.min.js vendor/cytoscape/LICENSE
var Files embed.FS

// ContentSecurityPolicy is sent with every asset: scripts, styles, images
// and connections from the server's own origin only, so the explorer
// cannot load a script from a CDN nor send what it reads elsewhere.
// Inline styles are allowed because Cytoscape.js adds a style element for
// its container; inline scripts are not.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the explorer's assets from the root of its path: mount
// it with http.StripPrefix. Assets are revalidated on every load (no-cache),
// so a new binary's page is never mixed with an old one's script.
func Handler() http.Handler {
	files := http.FileServerFS(Files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// No directory listings: only the page and its files.
		if p := r.URL.Path; p != "" && p != "/" && strings.HasSuffix(p, "/") {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
