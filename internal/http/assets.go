package http

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// assetsPrefix is where the embedded assets (package web) are served.
const assetsPrefix = "/assets/"

// immutableCache is the Cache-Control of a vendored file: its folder names
// the package's version, so its URL changes whenever its content does.
const immutableCache = "public, max-age=31536000, immutable"

// asset is one embedded file, ready to serve.
type asset struct {
	content []byte
	etag    string
}

// assetServer serves the files of an asset tree: GET and HEAD only, no
// directory listings, an ETag from the content (embedded files have no
// modification time) and long-lived caching for vendored files.
type assetServer struct {
	files map[string]asset
}

// newAssetServer reads the files of fsys below the folders dirs (each
// ending in "/") once: the tree is embedded in the binary, small, and
// never changes while the process runs. dirs are the folders of the pages
// served (pageAssetDirs), so a page switched off leaves none of its
// files, nor its libraries, reachable.
func newAssetServer(fsys fs.FS, dirs []string) *assetServer {
	s := &assetServer{files: map[string]asset{}}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !slices.ContainsFunc(dirs, func(dir string) bool { return strings.HasPrefix(path, dir) }) {
			return nil
		}
		if strings.HasSuffix(path, ".html") {
			// A page is served only at its own route, with its own
			// headers (the explorer's policy) and off switch.
			return nil
		}
		content, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(content)
		s.files[path] = asset{content: content, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		// The tree is embedded: failing to read it is a broken build.
		panic("assets: " + err.Error())
	}
	return s
}

// integrity returns the subresource integrity value of an asset (its path
// below the assets prefix), which the pages that load it name. It panics
// when the asset is missing, a broken build that tests catch.
func (s *assetServer) integrity(path string) string {
	a, ok := s.files[path]
	if !ok {
		panic("assets: no " + path)
	}
	sum := sha256.Sum256(a.content)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// ServeHTTP serves the asset at the request's path, below assetsPrefix.
func (s *assetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, assetsPrefix)
	a, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if strings.HasPrefix(name, "vendor/") {
		h.Set("Cache-Control", immutableCache)
	} else {
		// A page's own files keep their URL across releases: revalidate.
		h.Set("Cache-Control", "no-cache")
	}
	// ServeContent sets the type from the extension and answers
	// If-None-Match (304) and ranges.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.content))
}

// pageAssetDirs returns the folders below assetsPrefix of the files page
// loads (e.g. "vendor/cytoscape-3.34.4/" for /assets/vendor/cytoscape-3.34.4/cytoscape.min.js),
// sorted, each once: what the asset server serves for that page, the
// licence beside a library included.
func pageAssetDirs(files ...string) []string {
	var dirs []string
	for _, f := range files {
		dirs = append(dirs, path.Dir(strings.TrimPrefix(f, assetsPrefix))+"/")
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}
