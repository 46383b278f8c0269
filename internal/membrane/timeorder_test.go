package membrane_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

func TestParseTimeOrder(t *testing.T) {
	tests := []struct {
		q      string
		want   membrane.TimeOrder
		phrase string
	}{
		{"What was the most recent change to max.poll.records?", membrane.OrderLatest, "most recent"},
		{"What's the latest deadline for chapter 3?", membrane.OrderLatest, "latest"},
		{"Which oven did I pick in the end?", membrane.OrderLatest, "in the end"},
		{"Why isn't my friend running with me anymore?", membrane.OrderLatest, "anymore"},
		{"When did the Focus finally sell?", membrane.OrderLatest, "finally"},
		{"When were we originally going to be off work?", membrane.OrderEarliest, "originally"},
		{"What was the very first ticket we opened?", membrane.OrderEarliest, "first ticket"},
		{"What was the very first deadline Helen gave me?", membrane.OrderEarliest, "the very first"},
		{"What was the first problem we had with geo-cache?", membrane.OrderEarliest, "the first"},
		{"What price did I first put the Focus up for?", membrane.OrderEarliest, "i first"},
		{"How does Nell's start compare with Callum's first weekends?", membrane.OrderEarliest, "'s first"},
		{"What was the last quote the plumber sent?", membrane.OrderLatest, "the last"},
		{"When did we last speak to the dealer?", membrane.OrderLatest, "we last"},
		{"Which van did we end up hiring?", membrane.OrderLatest, "end up"},
		{"What was the first price rise Marsh Lane announced?", membrane.OrderEarliest, "first price"},
		{"What finishing time did I aim for at first?", membrane.OrderEarliest, "at first"},
		// Neither: no order word, a named time, "first" as a count or a name.
		{"Which camera am I taking with me?", membrane.OrderNone, ""},
		{"What did we do last May?", membrane.OrderNone, ""},
		{"Did we fly first class?", membrane.OrderNone, ""},
		{"What did we do in the last week?", membrane.OrderNone, ""},
		{"How did the last two months of training go?", membrane.OrderNone, ""},
		{"How did I feel in the first half of the race?", membrane.OrderNone, ""},
		{"What's the first name of the physio?", membrane.OrderNone, ""},
		{"", membrane.OrderNone, ""},
		// Bad input reads as no order: NUL, invalid UTF-8 (a lone
		// surrogate's bytes), Lucene syntax, a made-up date.
		{"the\x00first", membrane.OrderNone, ""},
		{"\xed\xa0\x80 first", membrane.OrderNone, ""},
		{`+first -"last" title:the*`, membrane.OrderNone, ""},
		{"32nd of Smarch", membrane.OrderNone, ""},
		{strings.Repeat("the first ", 10000), membrane.OrderEarliest, "the first"},
		// Both: asks for the change, not one end.
		{"What did we originally plan and what did we finally do?", membrane.OrderNone, ""},
		{"Which ryokan did we first book and which one did we end up with?", membrane.OrderNone, ""},
	}
	for _, tt := range tests {
		got, phrase := membrane.ParseTimeOrder(tt.q)
		if got != tt.want || phrase != tt.phrase {
			t.Errorf("ParseTimeOrder(%q) = %v %q, want %v %q", tt.q, got, phrase, tt.want, tt.phrase)
		}
	}
}

func TestOrderScore(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(10 * time.Hour)
	tests := []struct {
		o    membrane.TimeOrder
		at   time.Time
		from time.Time
		want float64
	}{
		{membrane.OrderLatest, to, from, 1},
		{membrane.OrderLatest, from, from, 0},
		{membrane.OrderLatest, from.Add(2 * time.Hour), from, 0.2},
		{membrane.OrderEarliest, from.Add(2 * time.Hour), from, 0.8},
		{membrane.OrderEarliest, from, from, 1},
		{membrane.OrderNone, to, from, 0},
		{membrane.OrderLatest, to, to, 1},                       // one instant: every hit is at the end
		{membrane.OrderLatest, to.Add(time.Hour), from, 1},      // clamped
		{membrane.OrderEarliest, from.Add(-time.Hour), from, 1}, // clamped
	}
	for _, tt := range tests {
		if got := membrane.OrderScore(tt.o, tt.at, tt.from, to); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("OrderScore(%v, %v, %v, %v) = %v, want %v", tt.o, tt.at, tt.from, to, got, tt.want)
		}
	}
}

func TestChronology(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hit := func(id string, score, text float64, hours int) membrane.Hit {
		return membrane.Hit{Candidate: membrane.Candidate{ID: id, At: t0.Add(time.Duration(hours) * time.Hour)},
			Score: score, Parts: membrane.ScoreParts{Text: text}}
	}
	vec := func(h membrane.Hit, v float64) membrane.Hit { h.Parts.Vector = &v; return h }
	ids := func(hs []membrane.Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	tests := []struct {
		name   string
		order  membrane.TimeOrder
		ranked []membrane.Hit
		want   []string
	}{
		{"no order keeps the ranking", membrane.OrderNone,
			[]membrane.Hit{hit("old", 0.60, 1, 0), hit("new", 0.58, 1, 10)}, []string{"old", "new"}},
		{"latest: the newer of two equal matches first", membrane.OrderLatest,
			[]membrane.Hit{hit("old", 0.60, 1, 0), hit("new", 0.58, 1, 10)}, []string{"new", "old"}},
		{"earliest: the older first", membrane.OrderEarliest,
			[]membrane.Hit{hit("new", 0.60, 1, 10), hit("old", 0.58, 1, 0)}, []string{"old", "new"}},
		{"a record matching nothing gains nothing from being the latest", membrane.OrderLatest,
			[]membrane.Hit{hit("match", 0.60, 1, 0), hit("neighbour", 0.58, 0, 10)}, []string{"match", "neighbour"}},
		{"the vector counts as a match", membrane.OrderLatest,
			[]membrane.Hit{hit("old", 0.60, 1, 0), vec(hit("new", 0.58, 0, 10), 0.9)}, []string{"new", "old"}},
		{"a far better match stays first", membrane.OrderLatest,
			[]membrane.Hit{hit("best", 0.80, 1, 0), hit("new", 0.50, 1, 10)}, []string{"best", "new"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := membrane.Chronology(tt.ranked, tt.order)
			if g := ids(got); len(g) != len(tt.want) || g[0] != tt.want[0] || g[1] != tt.want[1] {
				t.Fatalf("order %v, want %v", g, tt.want)
			}
			for _, h := range got {
				if tt.order == membrane.OrderNone && h.Parts.Order != 0 {
					t.Errorf("%s: order part %v without an order", h.ID, h.Parts.Order)
				}
			}
		})
	}
	// The part is what was added to the score.
	got := membrane.Chronology([]membrane.Hit{hit("old", 0.60, 1, 0), hit("new", 0.58, 0.5, 10)}, membrane.OrderLatest)
	if got[0].ID != "new" || math.Abs(got[0].Parts.Order-membrane.OrderWeight*0.5) > 1e-9 || math.Abs(got[0].Score-(0.58+membrane.OrderWeight*0.5)) > 1e-9 {
		t.Errorf("latest hit %+v, want order part %v added", got[0], membrane.OrderWeight*0.5)
	}
}
