package explorer_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/membrane/membrane/web/explorer"
)

// TestPageReferencesOnlyEmbeddedFiles: every script and stylesheet the
// page loads is a relative path to an embedded file, and no asset of the
// explorer's own names another origin (the Content-Security-Policy would
// block it; this says which file did).
func TestPageReferencesOnlyEmbeddedFiles(t *testing.T) {
	page, err := fs.ReadFile(explorer.Files, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) < 3 {
		t.Fatalf("index.html references %d files: %v", len(refs), refs)
	}
	for _, m := range refs {
		ref := m[1]
		if strings.Contains(ref, ":") || strings.HasPrefix(ref, "/") {
			t.Errorf("index.html references %q: not a relative path", ref)
			continue
		}
		if _, err := fs.Stat(explorer.Files, ref); err != nil {
			t.Errorf("index.html references %q, which is not embedded: %v", ref, err)
		}
	}
	for _, name := range []string{"index.html", "explorer.js", "explorer.css"} {
		b, err := fs.ReadFile(explorer.Files, name)
		if err != nil {
			t.Fatal(err)
		}
		if u := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).Find(b); u != nil {
			t.Errorf("%s names another origin: %s", name, u)
		}
	}
}

// TestVendoredCytoscapeRecorded: the embedded Cytoscape.js is the file
// VENDOR.md records (by its SHA-256), and its licence ships beside it.
func TestVendoredCytoscapeRecorded(t *testing.T) {
	notes, err := os.ReadFile(filepath.Join("vendor", "cytoscape", "VENDOR.md"))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := fs.ReadFile(explorer.Files, "vendor/cytoscape/cytoscape.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lib)
	if !strings.Contains(string(notes), hex.EncodeToString(sum[:])) {
		t.Errorf("VENDOR.md does not record the embedded cytoscape.min.js (sha256 %x)", sum)
	}
	version := regexp.MustCompile("`(\\d+\\.\\d+\\.\\d+)`").FindStringSubmatch(string(notes))
	if version == nil || !strings.Contains(string(notes), "cytoscape-"+version[1]+".tgz") {
		t.Errorf("VENDOR.md names no version with its npm tarball")
	}
	licence, err := fs.ReadFile(explorer.Files, "vendor/cytoscape/LICENSE")
	if err != nil || !strings.Contains(string(licence), "Cytoscape Consortium") {
		t.Errorf("licence: %v %.60q", err, licence)
	}
}

// TestQueriesValidAgainstSchema: every GraphQL document in explorer.js
// (its template strings, fragments filled in) is valid against the
// server's schema, so a schema change that breaks the page fails here.
// The graph query is checked once the schema has Query.graph; until then
// the page falls back to lineage.
func TestQueriesValidAgainstSchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "graph", "*.graphqls"))
	if err != nil || len(files) == 0 {
		t.Fatalf("schema files: %v %v", files, err)
	}
	var sources []*ast.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, &ast.Source{Name: f, Input: string(b)})
	}
	schema, gerr := gqlparser.LoadSchema(sources...)
	if gerr != nil {
		t.Fatal(gerr)
	}
	js, err := fs.ReadFile(explorer.Files, "explorer.js")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)const ([A-Z_]+) = (?:`([^`]*)`|'([^']*)');").FindAllStringSubmatch(string(js), -1) {
		consts[m[1]] = m[2] + m[3]
	}
	fields := consts["RECORD_FIELDS"]
	if fields == "" {
		t.Fatal("explorer.js has no RECORD_FIELDS")
	}
	names := []string{"GRAPH_QUERY", "LINEAGE_QUERY", "SEARCH_QUERY", "RECORD_QUERY", "AUDIT_QUERY", "CURSOR_QUERY", "CHANGES_SUBSCRIPTION"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			doc, ok := consts[name]
			if !ok {
				t.Fatalf("explorer.js has no %s", name)
			}
			if name == "GRAPH_QUERY" && schema.Query.Fields.ForName("graph") == nil {
				t.Skip("the schema has no Query.graph yet; the page uses lineage")
			}
			doc = strings.ReplaceAll(doc, "${RECORD_FIELDS}", fields)
			if strings.Contains(doc, "${") {
				t.Fatalf("unfilled template in %s", doc)
			}
			if _, errs := gqlparser.LoadQuery(schema, doc); errs != nil {
				t.Fatalf("%s: %v", name, errs)
			}
		})
	}
}
