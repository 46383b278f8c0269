package membrane_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestMentionCandidates(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"runs of one to four words, normalised", "Ask Priya Raman today",
			[]string{"ask", "ask priya", "ask priya raman", "ask priya raman today", "priya", "priya raman", "priya raman today", "raman", "raman today", "today"}},
		{"punctuation trimmed at the ends, kept inside", "(billing-service), PostgreSQL.",
			[]string{"billing-service", "billing-service postgresql", "postgresql"}},
		{"stop words and short words alone are none, inside a run they count", "it is on pg",
			[]string{"it is", "it is on", "it is on pg", "is on", "is on pg", "on pg"}},
		{"duplicates once", "Stripe stripe STRIPE", []string{"stripe", "stripe stripe", "stripe stripe stripe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := membrane.MentionCandidates(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("MentionCandidates(%q) = %q, want %q", tt.text, got, tt.want)
			}
			if n := membrane.MentionCandidatesAtMost(tt.text); n < len(tt.want) {
				t.Errorf("MentionCandidatesAtMost(%q) = %d, below its %d candidates", tt.text, n, len(tt.want))
			}
		})
	}
	long := strings.Repeat("word ", 10) + strings.Join(func() []string {
		var ws []string
		for i := range 1000 {
			ws = append(ws, fmt.Sprint("w", i))
		}
		return ws
	}(), " ")
	if got := membrane.MentionCandidates(long); len(got) != membrane.MaxMentionCandidates {
		t.Errorf("a long text gives %d candidates, want %d", len(got), membrane.MaxMentionCandidates)
	}
}

func TestMentionCandidatesAtMost(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"   \t\n", 0},
		{"one", membrane.MentionWords},
		{" two  words\n", 2 * membrane.MentionWords},
		{strings.Repeat("w ", 1000), membrane.MaxMentionCandidates},
	} {
		if got := membrane.MentionCandidatesAtMost(tt.text); got != tt.want {
			t.Errorf("MentionCandidatesAtMost(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
