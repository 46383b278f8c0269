package membrane_test

import (
	"math"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

// hasField reports whether err is EINVALID naming field.
func hasField(err error, field string) bool {
	if membrane.ErrorCode(err) != membrane.EINVALID {
		return false
	}
	for _, f := range membrane.ErrorFields(err) {
		if f.Field == field {
			return true
		}
	}
	return false
}

func TestSalienceAndConfidenceBounds(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*membrane.RecordInput)
		field string // "" when the input is valid
	}{
		{"salience 0", func(in *membrane.RecordInput) { in.Salience = new(0.0) }, ""},
		{"salience above 1", func(in *membrane.RecordInput) { in.Salience = new(2.5) }, ""},
		{"salience at the maximum", func(in *membrane.RecordInput) { in.Salience = new(membrane.MaxSalience) }, ""},
		{"salience just above the maximum", func(in *membrane.RecordInput) { in.Salience = new(math.Nextafter(membrane.MaxSalience, math.Inf(1))) }, "salience"},
		{"largest float salience", func(in *membrane.RecordInput) { in.Salience = new(math.MaxFloat64) }, "salience"},
		{"infinite salience", func(in *membrane.RecordInput) { in.Salience = new(math.Inf(1)) }, "salience"},
		{"NaN salience", func(in *membrane.RecordInput) { in.Salience = new(math.NaN()) }, "salience"},
		{"negative salience", func(in *membrane.RecordInput) { in.Salience = new(-math.SmallestNonzeroFloat64) }, "salience"},
		{"confidence 1", func(in *membrane.RecordInput) { in.Confidence = new(1.0) }, ""},
		{"confidence above 1", func(in *membrane.RecordInput) { in.Confidence = new(1.0000001) }, "confidence"},
		{"confidence -Inf", func(in *membrane.RecordInput) { in.Confidence = new(math.Inf(-1)) }, "confidence"},
		{"confidence NaN", func(in *membrane.RecordInput) { in.Confidence = new(math.NaN()) }, "confidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := semanticInput()
			tt.edit(&in)
			r, err := membrane.DefaultPolicy().BuildRecord(in, now)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("BuildRecord: %v", err)
				}
				if r.Salience > membrane.MaxSalience || r.Lifecycle.BaseSalience != r.Salience {
					t.Fatalf("salience %v base %v", r.Salience, r.Lifecycle.BaseSalience)
				}
				return
			}
			if !hasField(err, tt.field) {
				t.Fatalf("err = %v (fields %+v), want %s naming %s", err, membrane.ErrorFields(err), membrane.EINVALID, tt.field)
			}
		})
	}
}

// Records written before the bound may hold any salience; the writes that
// derive a new salience from the old one bring it back within it.
func TestSalienceWritesStayWithinTheBound(t *testing.T) {
	p := membrane.DefaultPolicy()
	legacy := func(t *testing.T) *membrane.Record {
		t.Helper()
		r, err := p.BuildRecord(semanticInput(), now)
		if err != nil {
			t.Fatal(err)
		}
		r.Salience, r.Lifecycle.BaseSalience = math.MaxFloat64, math.MaxFloat64
		return r
	}
	meta := membrane.RevisionMeta{Actor: "a"}
	tests := []struct {
		name  string
		write func(r *membrane.Record) float64
	}{
		{"reinforce", func(r *membrane.Record) float64 {
			c, err := membrane.Reinforce(r, meta, now)
			if err != nil {
				t.Fatal(err)
			}
			return c.Result.Lifecycle.BaseSalience
		}},
		{"penalize", func(r *membrane.Record) float64 {
			c, err := membrane.Penalize(r, 1, meta, now)
			if err != nil {
				t.Fatal(err)
			}
			return c.Result.Lifecycle.BaseSalience
		}},
		{"merged fact", func(r *membrane.Record) float64 {
			in := membrane.MergedFact([]*membrane.Record{r}, now)
			if _, err := p.BuildRecord(in, now); err != nil {
				t.Fatalf("the merged fact of a legacy record does not build: %v", err)
			}
			return *in.Salience
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.write(legacy(t)); !(got >= 0 && got <= membrane.MaxSalience) {
				t.Fatalf("salience written = %v, want within [0, %v]", got, membrane.MaxSalience)
			}
		})
	}
}

func TestBlankIDsInListsAreRefused(t *testing.T) {
	p := membrane.DefaultPolicy()
	toolOutput := func(deps ...string) error {
		_, err := p.BuildToolOutput(membrane.IngestToolOutput{IngestMeta: membrane.IngestMeta{Source: "agent"}, ToolName: "bash", DependsOn: deps}, now)
		return err
	}
	episode := func(deps ...string) error {
		_, err := p.BuildRecord(membrane.RecordInput{Type: membrane.TypeEpisodic, Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{
			ToolGraph: []membrane.ToolNode{{ID: "1", Tool: "bash", DependsOn: deps}}}}}, now)
		return err
	}
	tests := []struct {
		name  string
		err   error
		field string // "" when valid
	}{
		{"ingestToolOutput dependsOn id", toolOutput("0"), ""},
		{"ingestToolOutput dependsOn empty", toolOutput(""), "dependsOn[0]"},
		{"ingestToolOutput dependsOn blank", toolOutput("a", " \t"), "dependsOn[1]"},
		{"toolGraph dependsOn id", episode("0"), ""},
		{"toolGraph dependsOn empty", episode(""), "payload.toolGraph[0].dependsOn[0]"},
		{"merge ids", membrane.ValidateMergeIDs([]string{"a", "b"}), ""},
		{"merge ids empty", membrane.ValidateMergeIDs([]string{"a", ""}), "ids[1]"},
		{"merge ids blank", membrane.ValidateMergeIDs([]string{" ", "b"}), "ids[0]"},
		{"change filter ids", membrane.ChangeFilter{RecordIDs: []string{"a"}}.Validate(), ""},
		{"change filter ids blank", membrane.ChangeFilter{RecordIDs: []string{"a", " "}}.Validate(), "filter.ids[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.field == "" {
				if tt.err != nil {
					t.Fatalf("err = %v, want none", tt.err)
				}
				return
			}
			if !hasField(tt.err, tt.field) {
				t.Fatalf("err = %v (fields %+v), want %s naming %s", tt.err, membrane.ErrorFields(tt.err), membrane.EINVALID, tt.field)
			}
		})
	}
}

// TestCutBytes: a text cut to a number of bytes ends at a rune boundary,
// never inside a character of several bytes.
func TestCutBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exact", 5, "exact"},
		{"longer text", 6, "longer"},
		{"héllo", 2, "h"}, // é is two bytes: the cut falls inside it
		{"héllo", 3, "hé"},
		{"日本", 4, "日"},
		{"日本", 2, ""},
		{"", 0, ""},
	} {
		if got := membrane.CutBytes(tc.s, tc.n); got != tc.want {
			t.Errorf("CutBytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
