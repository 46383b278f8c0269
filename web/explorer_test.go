package web_test

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

	"github.com/membrane/membrane/web"
)

// TestExplorerReferencesOnlyEmbeddedFiles: every script and stylesheet
// the explorer's page loads is an embedded asset, by its path below
// /assets/, and no file of the explorer's own names another origin (the
// page's Content-Security-Policy would block it; this says which file did).
func TestExplorerReferencesOnlyEmbeddedFiles(t *testing.T) {
	page, err := fs.ReadFile(web.FS, "explorer/index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) != 3 { // Cytoscape.js, the script and the stylesheet
		t.Fatalf("index.html references %d files, want 3: %v", len(refs), refs)
	}
	for _, m := range refs {
		name, ok := strings.CutPrefix(m[1], "/assets/")
		if !ok {
			t.Errorf("index.html references %q: not below /assets/", m[1])
			continue
		}
		if _, err := fs.Stat(web.FS, name); err != nil {
			t.Errorf("index.html references %q, which is not embedded: %v", m[1], err)
		}
	}
	for _, name := range []string{"explorer/index.html", "explorer/explorer.js", "explorer/explorer.css"} {
		b, err := fs.ReadFile(web.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		if u := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).Find(b); u != nil {
			t.Errorf("%s names another origin: %s", name, u)
		}
	}
}

// TestVendoredCytoscape: the embedded Cytoscape.js is the file
// vendor/README.md records (by its SHA-256, in the row of its folder), and
// its licence ships beside it.
func TestVendoredCytoscape(t *testing.T) {
	const folder = "vendor/cytoscape-3.34.4"
	notes, err := fs.ReadFile(web.FS, "vendor/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(notes), "\n") {
		if strings.HasPrefix(line, "| `cytoscape-3.34.4` |") {
			row = line
		}
	}
	lib, err := fs.ReadFile(web.FS, folder+"/cytoscape.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lib)
	if !strings.Contains(row, hex.EncodeToString(sum[:])) || !strings.Contains(row, "cytoscape-3.34.4.tgz") {
		t.Errorf("vendor/README.md's row %q does not record the embedded cytoscape.min.js (sha256 %x)", row, sum)
	}
	licence, err := fs.ReadFile(web.FS, folder+"/LICENSE")
	if err != nil || !strings.Contains(string(licence), "Cytoscape Consortium") {
		t.Errorf("licence: %v %.60q", err, licence)
	}
}

// TestQueriesValidAgainstSchema: every GraphQL document in explorer.js
// (its template strings, fragments filled in) is valid against the
// server's schema, so a schema change that breaks the page fails here.
func TestQueriesValidAgainstSchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "graph", "*.graphqls"))
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
	js, err := fs.ReadFile(web.FS, "explorer/explorer.js")
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
