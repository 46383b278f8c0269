package http

import (
	"bytes"
	"io/fs"
	"net/http"
	"regexp"
	"time"
)

// explorerPage is the lineage explorer's page (package web,
// explorer/index.html); its script and stylesheet, and the vendored
// Cytoscape.js, are assets below assetsPrefix.
const explorerPage = "explorer/index.html"

// explorerAssetRef is how the page names a file it loads: src or href
// below assetsPrefix (package web's TestExplorerReferencesOnlyEmbeddedFiles
// checks that it names no other).
var explorerAssetRef = regexp.MustCompile(`(?:src|href)="(` + assetsPrefix + `[^"]+)"`)

// explorerAssetDirs returns the asset folders of the files the explorer's
// page in fsys loads: read from the page, so that a new Cytoscape.js
// version is a change to the page alone.
func explorerAssetDirs(fsys fs.FS) []string {
	page, err := fs.ReadFile(fsys, explorerPage)
	if err != nil {
		// The page is embedded: failing to read it is a broken build.
		panic("explorer: " + err.Error())
	}
	var files []string
	for _, m := range explorerAssetRef.FindAllStringSubmatch(string(page), -1) {
		files = append(files, m[1])
	}
	return pageAssetDirs(files...)
}

// ExplorerContentSecurityPolicy is sent with the explorer's page: scripts,
// styles, images and connections from the server's own origin only, so
// that the page loads nothing from a CDN and sends what it reads nowhere
// else. Inline styles are allowed because Cytoscape.js adds a style
// element for its container; inline scripts are not.
const ExplorerContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// newExplorerPage serves the explorer's page from fsys. The page is public,
// like GraphiQL's: what it shows comes from /graphql, under the API key
// the user gives it. It is revalidated on every load (no-cache), so a new
// binary's page never runs an old script.
func newExplorerPage(fsys fs.FS) http.Handler {
	page, err := fs.ReadFile(fsys, explorerPage)
	if err != nil {
		// The page is embedded: failing to read it is a broken build.
		panic("explorer: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ExplorerContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(page))
	})
}
