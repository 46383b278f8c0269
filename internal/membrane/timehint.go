package membrane

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeHint is the time a retrieval's query asks about: "last week", "in
// early March", "on April 9th", "two months ago". Records whose time (an
// episode's event time, else its creation) lies in [From, To) get the full
// time signal; the signal halves with every Width of distance outside it
// (TimeScore). The zero TimeHint asks about no time.
type TimeHint struct {
	From, To time.Time
	// Phrase is the words of the query the window was read from.
	Phrase string
}

// Empty reports a hint that asks about no time.
func (h TimeHint) Empty() bool { return h.From.IsZero() || !h.To.After(h.From) }

// Width is the distance over which the signal halves outside the window:
// the window's length, at least a day.
func (h TimeHint) Width() time.Duration { return max(h.To.Sub(h.From), 24*time.Hour) }

// TimeScore is the time signal of a record of time at for h: 1 inside the
// window, 2^(-distance/Width) outside it, 0 for an empty hint.
func TimeScore(h TimeHint, at time.Time) float64 {
	if h.Empty() {
		return 0
	}
	var d time.Duration
	switch {
	case at.Before(h.From):
		d = h.From.Sub(at)
	case !at.Before(h.To):
		d = at.Sub(h.To)
	default:
		return 1
	}
	return math.Exp2(-d.Hours() / h.Width().Hours())
}

var months = map[string]time.Month{
	"january": time.January, "jan": time.January, "february": time.February, "feb": time.February,
	"march": time.March, "mar": time.March, "april": time.April, "apr": time.April, "may": time.May,
	"june": time.June, "jun": time.June, "july": time.July, "jul": time.July, "august": time.August,
	"aug": time.August, "september": time.September, "sep": time.September, "sept": time.September,
	"october": time.October, "oct": time.October, "november": time.November, "nov": time.November,
	"december": time.December, "dec": time.December,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3, "several": 3,
}

const monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`

// The patterns are tried in order; the first that yields a valid window
// wins. Each is anchored at word boundaries and bounded (no nested
// repetition), so a 4 KB query cannot make them slow.
var (
	reISODate   = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	reMonthDay  = regexp.MustCompile(`\b` + monthRE + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?`)
	reDayMonth  = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRE + `\b(?:,?\s+(\d{4}))?`)
	rePartMonth = regexp.MustCompile(`\b(early|beginning of|start of|mid|middle of|late|end of)[\s-]+` + monthRE + `\b(?:\s+(\d{4}))?`)
	reMonth     = regexp.MustCompile(`\b(?:(last|this|in|during|since|by|of|from|before|after|until)\s+)?` + monthRE + `\b(?:\s+(\d{4}))?`)
	reAgo       = regexp.MustCompile(`\b(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple|few|several)\s+(?:of\s+)?(day|week|month|year)s?\s+ago\b`)
	reLastUnit  = regexp.MustCompile(`\b(last|past|previous|this)\s+(week|month|year|weekend)\b`)
	reWeekday   = regexp.MustCompile(`\b(?:last|on|this|past)\s+(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b`)
	reDayWord   = regexp.MustCompile(`\b(yesterday|today|tonight|this morning|this afternoon|this evening|last night)\b`)
	reTheDay    = regexp.MustCompile(`\b(?:on|the)\s+(?:the\s+)?(\d{1,2})(st|nd|rd|th)\b`)
)

// ParseTimeHint reads the first time expression of a query, relative to
// ref (the instant the question is asked: the ranking instant). It
// understands ISO dates, month names with or without a day or a year
// ("March", "early March", "April 9th", "9 April 2026", "last May"), "N
// days/weeks/months/years ago", "last/this week/month/year", weekdays
// ("last Tuesday"), "yesterday", "today" and "the 14th". A month or day
// without a year is its latest occurrence not after ref. Anything else,
// an impossible date ("the 32nd of Smarch", "February 30") included, is no
// hint (a date that cannot be, not a nearby one): the query is then ranked
// without time, never refused.
func ParseTimeHint(query string, ref time.Time) TimeHint {
	q := strings.ToLower(query)
	ref = ref.UTC()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	today := day(ref.Year(), ref.Month(), ref.Day())
	hint := func(phrase string, from, to time.Time) TimeHint { return TimeHint{From: from, To: to, Phrase: phrase} }
	// validDay reports whether d is a day of month m of year y.
	validDay := func(y int, m time.Month, d int) bool { return d >= 1 && d <= day(y, m+1, 0).Day() }
	// latestYear is the year of the latest month m (day d) not after ref.
	latestYear := func(m time.Month, d int) int {
		if day(ref.Year(), m, 1).AddDate(0, 0, d-1).After(today) {
			return ref.Year() - 1
		}
		return ref.Year()
	}
	year := func(s string, m time.Month, d int) (int, bool) {
		if s == "" {
			return latestYear(m, d), true
		}
		y, err := strconv.Atoi(s)
		return y, err == nil && y >= 1900 && y <= 2200
	}

	if m := reISODate.FindStringSubmatch(q); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		if mo < 1 || mo > 12 || !validDay(y, time.Month(mo), d) {
			return TimeHint{} // an impossible date: no time at all
		}
		from := day(y, time.Month(mo), d)
		return hint(m[0], from, from.AddDate(0, 0, 1))
	}
	if m := reMonthDay.FindStringSubmatch(q); m != nil {
		mo := months[m[1]]
		d, _ := strconv.Atoi(m[2])
		y, ok := year(m[3], mo, d)
		if !ok || !validDay(y, mo, d) {
			return TimeHint{}
		}
		from := day(y, mo, d)
		return hint(m[0], from, from.AddDate(0, 0, 1))
	}
	if m := reDayMonth.FindStringSubmatch(q); m != nil {
		mo := months[m[2]]
		d, _ := strconv.Atoi(m[1])
		y, ok := year(m[3], mo, d)
		if !ok || !validDay(y, mo, d) {
			return TimeHint{}
		}
		from := day(y, mo, d)
		return hint(m[0], from, from.AddDate(0, 0, 1))
	}
	if m := rePartMonth.FindStringSubmatch(q); m != nil {
		mo := months[m[2]]
		if y, ok := year(m[3], mo, 1); ok {
			start := day(y, mo, 1)
			switch m[1] {
			case "early", "beginning of", "start of":
				return hint(m[0], start, start.AddDate(0, 0, 10))
			case "mid", "middle of":
				return hint(m[0], start.AddDate(0, 0, 10), start.AddDate(0, 0, 20))
			default:
				return hint(m[0], start.AddDate(0, 0, 20), start.AddDate(0, 1, 0))
			}
		}
	}
	if m := reAgo.FindStringSubmatch(q); m != nil {
		n, ok := numberWords[m[1]]
		if !ok {
			n, _ = strconv.Atoi(m[1])
		}
		if n > 0 {
			var at time.Time
			switch m[2] {
			case "day":
				return hint(m[0], today.AddDate(0, 0, -n), today.AddDate(0, 0, -n+1))
			case "week":
				at = today.AddDate(0, 0, -7*n)
				return hint(m[0], at.AddDate(0, 0, -3), at.AddDate(0, 0, 4))
			case "month":
				at = today.AddDate(0, -n, 0)
				return hint(m[0], at.AddDate(0, 0, -15), at.AddDate(0, 0, 15))
			default:
				at = today.AddDate(-n, 0, 0)
				return hint(m[0], at.AddDate(0, -6, 0), at.AddDate(0, 6, 0))
			}
		}
	}
	if m := reLastUnit.FindStringSubmatch(q); m != nil {
		this := m[1] == "this"
		switch m[2] {
		case "week":
			// Weeks start on Monday.
			monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
			if this {
				return hint(m[0], monday, monday.AddDate(0, 0, 7))
			}
			return hint(m[0], monday.AddDate(0, 0, -7), monday)
		case "weekend":
			saturday := today.AddDate(0, 0, -((int(today.Weekday()) + 1) % 7))
			if saturday.Equal(today) && !this {
				saturday = saturday.AddDate(0, 0, -7)
			}
			return hint(m[0], saturday, saturday.AddDate(0, 0, 2))
		case "month":
			first := day(ref.Year(), ref.Month(), 1)
			if this {
				return hint(m[0], first, first.AddDate(0, 1, 0))
			}
			return hint(m[0], first.AddDate(0, -1, 0), first)
		default:
			first := day(ref.Year(), time.January, 1)
			if this {
				return hint(m[0], first, first.AddDate(1, 0, 0))
			}
			return hint(m[0], first.AddDate(-1, 0, 0), first)
		}
	}
	if m := reMonth.FindStringSubmatch(q); m != nil && (m[1] != "" || m[2] != "may" && m[2] != "mar") {
		// "may" and "mar" alone are more often words than months: only
		// with a preposition ("in May", "last May") or a year.
		mo := months[m[2]]
		y, ok := year(m[3], mo, 1)
		if ok && m[1] == "last" && m[3] == "" && mo == ref.Month() {
			y--
		}
		if ok {
			start := day(y, mo, 1)
			if m[1] == "since" {
				return hint(m[0], start, today.AddDate(0, 0, 1))
			}
			return hint(m[0], start, start.AddDate(0, 1, 0))
		}
	}
	if m := reWeekday.FindStringSubmatch(q); m != nil {
		wd := weekdays[m[1]]
		back := (int(today.Weekday()) - int(wd) + 7) % 7
		if back == 0 {
			back = 7
		}
		from := today.AddDate(0, 0, -back)
		return hint(m[0], from, from.AddDate(0, 0, 1))
	}
	if m := reDayWord.FindStringSubmatch(q); m != nil {
		if m[1] == "yesterday" || m[1] == "last night" {
			return hint(m[0], today.AddDate(0, 0, -1), today)
		}
		return hint(m[0], today, today.AddDate(0, 0, 1))
	}
	if m := reTheDay.FindStringSubmatch(q); m != nil {
		d, _ := strconv.Atoi(m[1])
		y, mo := ref.Year(), ref.Month()
		if d > ref.Day() {
			mo--
			if mo < time.January {
				mo, y = time.December, y-1
			}
		}
		if validDay(y, mo, d) {
			from := day(y, mo, d)
			return hint(m[0], from, from.AddDate(0, 0, 1))
		}
	}
	return TimeHint{}
}
