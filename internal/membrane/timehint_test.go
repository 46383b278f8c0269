package membrane_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func TestParseTimeHint(t *testing.T) {
	// A Thursday.
	ref := time.Date(2026, 4, 16, 15, 30, 0, 0, time.UTC)
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		query    string
		from, to time.Time
	}{
		{"what happened on 2026-03-14?", d(2026, 3, 14), d(2026, 3, 15)},
		{"What did we book on April 9th?", d(2026, 4, 9), d(2026, 4, 10)},
		{"the call on 9 April", d(2026, 4, 9), d(2026, 4, 10)},
		{"the 3rd of February 2025", d(2025, 2, 3), d(2025, 2, 4)},
		{"plans for december 24", d(2025, 12, 24), d(2025, 12, 25)}, // not after ref: last year's
		{"what did we decide in early March about the tiles?", d(2026, 3, 1), d(2026, 3, 11)},
		{"mid-February", d(2026, 2, 11), d(2026, 2, 21)},
		{"at the end of January", d(2026, 1, 21), d(2026, 2, 1)},
		{"what did I say in March?", d(2026, 3, 1), d(2026, 4, 1)},
		{"last April", d(2025, 4, 1), d(2025, 5, 1)}, // this April is still under way
		{"in May", d(2025, 5, 1), d(2025, 6, 1)},
		{"since February", d(2026, 2, 1), d(2026, 4, 17)},
		{"June 2024", d(2024, 6, 1), d(2024, 7, 1)},
		{"What did I say last week about the plumber?", d(2026, 4, 6), d(2026, 4, 13)},
		{"this week", d(2026, 4, 13), d(2026, 4, 20)},
		{"last month", d(2026, 3, 1), d(2026, 4, 1)},
		{"this year", d(2026, 1, 1), d(2027, 1, 1)},
		{"last year", d(2025, 1, 1), d(2026, 1, 1)},
		{"two weeks ago", d(2026, 3, 30), d(2026, 4, 6)},
		{"3 days ago", d(2026, 4, 13), d(2026, 4, 14)},
		{"a couple of months ago", d(2026, 2, 1), d(2026, 3, 3)},
		{"a year ago", d(2024, 10, 16), d(2025, 10, 16)},
		{"last Tuesday", d(2026, 4, 14), d(2026, 4, 15)},
		{"on thursday", d(2026, 4, 9), d(2026, 4, 10)}, // today is Thursday: the one before
		{"yesterday", d(2026, 4, 15), d(2026, 4, 16)},
		{"what did I eat today", d(2026, 4, 16), d(2026, 4, 17)},
		{"What broke on the 14th?", d(2026, 4, 14), d(2026, 4, 15)},
		{"the 20th", d(2026, 3, 20), d(2026, 3, 21)}, // not yet this month
	}
	for _, tt := range tests {
		h := membrane.ParseTimeHint(tt.query, ref)
		if !h.From.Equal(tt.from) || !h.To.Equal(tt.to) {
			t.Errorf("%q: [%s, %s) %q, want [%s, %s)", tt.query, h.From.Format(time.DateOnly), h.To.Format(time.DateOnly), h.Phrase,
				tt.from.Format(time.DateOnly), tt.to.Format(time.DateOnly))
		}
	}
}

// TestParseTimeHintNone: questions with no time, impossible dates and
// hostile input give no hint (and never panic).
func TestParseTimeHintNone(t *testing.T) {
	ref := time.Date(2026, 4, 16, 15, 30, 0, 0, time.UTC)
	for _, q := range []string{
		"", "which database does billing use", "the 32nd of Smarch", "February 30", "2026-02-30", "2026-13-01",
		"you may want to march on", "on the 0th", "99999 days ago", "0 weeks ago",
		"\x00\ufffd", strings.Repeat("last ", 1000), strings.Repeat("9", 4096),
	} {
		if h := membrane.ParseTimeHint(q, ref); !h.Empty() {
			t.Errorf("%q: hint [%s, %s) %q, want none", q, h.From, h.To, h.Phrase)
		}
	}
}

func TestTimeScore(t *testing.T) {
	h := membrane.TimeHint{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)}
	tests := []struct {
		at   time.Time
		want float64
	}{
		{h.From, 1},
		{h.To.Add(-time.Second), 1},
		{h.To.AddDate(0, 0, 7), 0.5},
		{h.From.AddDate(0, 0, -14), 0.25},
	}
	for _, tt := range tests {
		if got := membrane.TimeScore(h, tt.at); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("TimeScore(%s) = %v, want %v", tt.at, got, tt.want)
		}
	}
	if got := membrane.TimeScore(membrane.TimeHint{}, h.From); got != 0 {
		t.Errorf("empty hint: %v", got)
	}
}
