package membrane

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// TimeOrder is what a query asks of time without naming one: the latest
// state of something ("the most recent change", "in the end", "anymore")
// or its first ("originally", "the very first"). The zero TimeOrder asks
// for neither.
type TimeOrder int

// Orders a query can ask for.
const (
	OrderNone TimeOrder = iota
	OrderLatest
	OrderEarliest
)

// String is the order's name in the API.
func (o TimeOrder) String() string {
	switch o {
	case OrderLatest:
		return "latest"
	case OrderEarliest:
		return "earliest"
	}
	return ""
}

// The phrases that ask for an order, bounded and anchored at word
// boundaries; each was read in the eval's questions asking for what it
// says.
var (
	reLatest   = regexp.MustCompile(`\b(latest|most recent(?:ly)?|newest|in the end|end(?:ed)? up|finally|eventually|these days|any ?more|currently|at the moment|right now|nowadays|still|last time|at last)\b`)
	reEarliest = regexp.MustCompile(`\b(originally|initially|at first|at the start|to begin with|in the beginning|first ever|earliest|first (?:price|offer|quote|plan|idea|choice|ticket|date|version))\b`)
	// reOrdinal reads "first" and "last" as the ordinal of a thing, after
	// a determiner or a possessive ("the very first deadline", "his first
	// offer", "Callum's first weekends", "the last quote"), or as an
	// adverb after its subject ("I first put it up for", "when we last
	// spoke"). Alone they are mostly a count, a name or a time ("first
	// class", "last May"): the word after them is checked by ordinalNoun.
	reOrdinal = regexp.MustCompile(`(?:\b(?:the|my|our|your|his|her|their|its)|['’]s|\b(?:i|we|you|they|he|she|it))\s+(?:very\s+)?(first|last)\b(?:[\s-]+([a-z]+))?`)
)

// notOrdinal are the words after "first" or "last" that make them a name
// or a named time rather than the first or last of something: "first
// class", "the first half", "the last week" (TimeHint reads that one).
var notOrdinal = map[string]bool{
	"class": true, "name": true, "names": true, "aid": true, "half": true, "place": true, "person": true,
	"hand": true, "floor": true, "quarter": true, "round": true, "minute": true, "minutes": true,
	"hour": true, "hours": true, "night": true, "day": true, "days": true, "week": true, "weeks": true,
	"weekend": true, "month": true, "months": true, "year": true, "years": true, "few": true,
	"couple": true, "two": true, "three": true, "four": true, "five": true, "several": true,
}

// ordinal returns the order the first ordinal "first" or "last" of q (lower
// case) asks for and the words it was read from.
func ordinal(q string) (TimeOrder, string) {
	for _, m := range reOrdinal.FindAllStringSubmatchIndex(q, 8) {
		if m[4] >= 0 && notOrdinal[q[m[4]:m[5]]] {
			continue
		}
		phrase := q[m[0]:m[3]]
		if q[m[2]:m[3]] == "first" {
			return OrderEarliest, phrase
		}
		return OrderLatest, phrase
	}
	return OrderNone, ""
}

// ParseTimeOrder reads the order a query asks for and the words it was read
// from. A query asking for both, or for neither, asks for none.
func ParseTimeOrder(query string) (TimeOrder, string) {
	q := strings.ToLower(query)
	latest, earliest := reLatest.FindString(q), reEarliest.FindString(q)
	if o, phrase := ordinal(q); o == OrderLatest && latest == "" {
		latest = phrase
	} else if o == OrderEarliest && earliest == "" {
		earliest = phrase
	}
	switch {
	case latest != "" && earliest == "":
		return OrderLatest, latest
	case earliest != "" && latest == "":
		return OrderEarliest, earliest
	}
	return OrderNone, ""
}

// OrderWeight is the most an order adds to a hit's score (Chronology): a
// hit that matches the query best and is the latest of the hits, for a
// query asking for the latest.
const OrderWeight = 0.1

// OrderScore is where at lies between from and to (the hits' earliest and
// latest times) as the order asks: 1 at the end it asks for, 0 at the other,
// 1 for every time when from and to are the same; 0 without an order.
func OrderScore(o TimeOrder, at, from, to time.Time) float64 {
	if o == OrderNone {
		return 0
	}
	span := to.Sub(from)
	if span <= 0 {
		return 1
	}
	x := unitClamp(float64(at.Sub(from)) / float64(span))
	if o == OrderEarliest {
		return 1 - x
	}
	return x
}

// Chronology reorders ranked hits (best first) for a query that asks for
// an order: each hit gains OrderWeight × OrderScore × how well it matches
// the query itself (the better of its text and vector scores), so that among
// the hits that answer the question the latest (or the first) comes first,
// while a record that only shares its time with them gains nothing. The
// span is that of the hits given (the store's best candidates). Parts.Order
// is what was added; the order of equal scores is kept.
func Chronology(ranked []Hit, o TimeOrder) []Hit {
	if o == OrderNone || len(ranked) == 0 {
		return ranked
	}
	from, to := ranked[0].At, ranked[0].At
	for _, h := range ranked[1:] {
		if h.At.Before(from) {
			from = h.At
		}
		if h.At.After(to) {
			to = h.At
		}
	}
	out := slices.Clone(ranked)
	for i := range out {
		match := out[i].Parts.Text
		if v := out[i].Parts.Vector; v != nil && *v > match {
			match = *v
		}
		out[i].Parts.Order = OrderWeight * OrderScore(o, out[i].At, from, to) * match
		out[i].Score += out[i].Parts.Order
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}
