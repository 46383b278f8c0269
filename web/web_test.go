package web_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/membrane/membrane/web"
)

// TestVendoredPackagesAreRecorded: every vendored folder is one package at
// one version (<package>-<version>), ships its licence, and has its row
// in vendor/README.md; no source maps are kept.
func TestVendoredPackagesAreRecorded(t *testing.T) {
	readme, err := os.ReadFile("vendor/README.md")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := fs.ReadDir(web.FS, "vendor")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n++
		name := d.Name()
		if i := strings.LastIndex(name, "-"); i <= 0 || !strings.ContainsAny(name[i+1:], "0123456789") || !strings.Contains(name[i+1:], ".") {
			t.Errorf("vendor/%s: not <package>-<version>", name)
		}
		if _, err := fs.Stat(web.FS, "vendor/"+name+"/LICENSE"); err != nil {
			t.Errorf("vendor/%s has no LICENSE: %v", name, err)
		}
		if !strings.Contains(string(readme), "| `"+name+"` |") {
			t.Errorf("vendor/README.md has no row for %s", name)
		}
		files, _ := fs.ReadDir(web.FS, "vendor/"+name)
		for _, f := range files {
			if strings.HasSuffix(f.Name(), ".map") {
				t.Errorf("vendor/%s/%s: a source map", name, f.Name())
			}
		}
	}
	if n == 0 {
		t.Fatal("no vendored packages")
	}
}
