package cypher_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/cypher"
)

// Names lists the statement files and nothing of the subfolders: analyst/
// is Analyst's, and expanded/ (the generated statements as they run) is
// not embedded at all.
func TestCypherNames(t *testing.T) {
	names := cypher.Names()
	tests := []struct {
		name   string
		listed bool
	}{
		{"schema", true},
		{"lineage", true},
		{"ping", true},
		{"analyst", false},
		{"expanded", false},
		{"analyst/lineage", false},
		{"expanded/lineage", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slices.Contains(names, tt.name); got != tt.listed {
				t.Fatalf("listed %v, want %v", got, tt.listed)
			}
		})
	}
	if !slices.IsSorted(names) {
		t.Errorf("names not sorted: %v", names)
	}
	for _, n := range names {
		if cypher.Must(n) == "" {
			t.Errorf("%s is empty", n)
		}
	}
}

// The generated statements in expanded/ are for reading: none of them can
// be loaded in place of a template.
func TestCypherExpandedNotEmbedded(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("expanded/lineage is embedded")
		}
	}()
	cypher.Must("expanded/lineage")
}
