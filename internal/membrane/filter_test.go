package membrane_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

// TestRecordFilterText: the records text filter is analysed as retrieve's
// query (same terms, same bounds, same refusals).
func TestRecordFilterText(t *testing.T) {
	tests := []struct {
		name        string
		text        string
		field       string // the refused field, or ""
		unmatchable bool
	}{
		{"blank is no filter", "  ", "", false},
		{"words", "Which databases use_snake_case?", "", false},
		{"only stop words", "the and of", "", true},
		{"only punctuation", "*:*", "filter.text", false},
		{"too long", strings.Repeat("x", membrane.MaxQueryBytes+1), "filter.text", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := membrane.RecordFilter{Text: tt.text}
			err := f.Validate()
			if fields := membrane.ErrorFields(err); tt.field != "" {
				if len(fields) != 1 || fields[0].Field != tt.field {
					t.Fatalf("err %v, want one error on %s", err, tt.field)
				}
				return
			} else if err != nil {
				t.Fatal(err)
			}
			if f.Unmatchable() != tt.unmatchable {
				t.Errorf("unmatchable %v", f.Unmatchable())
			}
			q, err := membrane.NewRetrieveQuery(&tt.text, nil, nil, nil, nil, nil, nil)
			if err != nil || !slices.Equal(q.Terms, f.TextTerms) {
				t.Errorf("filter terms %q, retrieve terms %q (%v)", f.TextTerms, q.Terms, err)
			}
		})
	}
}

func TestRetrieveFilterTags(t *testing.T) {
	many := make([]string, membrane.MaxTags+1)
	for i := range many {
		many[i] = "t"
	}
	tests := []struct {
		name  string
		tags  []string
		field string
	}{
		{"none", nil, ""},
		{"two", []string{"a", "b"}, ""},
		{"empty tag", []string{"a", ""}, "tags[1]"},
		{"too many", many, "tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q membrane.RetrieveQuery
			err := q.FilterTags(tt.tags)
			if tt.field == "" {
				if err != nil || !slices.Equal(q.Tags, tt.tags) {
					t.Fatalf("err %v tags %v", err, q.Tags)
				}
				return
			}
			if fields := membrane.ErrorFields(err); len(fields) != 1 || fields[0].Field != tt.field || q.Tags != nil {
				t.Fatalf("err %v tags %v, want one error on %s and no tags", err, q.Tags, tt.field)
			}
		})
	}
}
