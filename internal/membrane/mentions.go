package membrane

import (
	"strings"
	"unicode"
)

const (
	// MaxMentionCandidates bounds the names one record's text is looked
	// up by (MentionCandidates): a long text's first ones.
	MaxMentionCandidates = 512
	// MentionWords is the most words of a name found in text ("Priya
	// Raman", "invoice service", "Google Cloud Storage bucket").
	MentionWords = 4
	// mentionMinBytes is the shortest one-word name found in text.
	mentionMinBytes = 3
)

// MentionCandidates are the names a text can mention an entity by: its
// runs of 1 to MentionWords words (split at white space, each word's
// leading and trailing punctuation trimmed), normalised as entity names
// are (NormaliseTerm), without duplicates, in order of appearance, at most
// MaxMentionCandidates. A single word that is a stop word or shorter than
// three bytes is none: an entity called "it", "on" or "pg" would otherwise
// be named by most of a memory. Words keep their inner punctuation, so
// "billing-service," names billing-service and "pg-billing" does not name
// pg.
func MentionCandidates(text string) []string {
	var words []string
	for _, f := range strings.Fields(text) {
		if w := strings.TrimFunc(f, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }); w != "" {
			words = append(words, strings.ToLower(w))
		}
	}
	seen := map[string]bool{}
	var out []string
	for i := range words {
		for n := 1; n <= MentionWords && i+n <= len(words); n++ {
			name := strings.Join(words[i:i+n], " ")
			if n == 1 && (len(name) < mentionMinBytes || stopWords[name]) {
				continue
			}
			if len(name) > MaxTermBytes || seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, name)
			if len(out) == MaxMentionCandidates {
				return out
			}
		}
	}
	return out
}

// MentionCandidatesAtMost bounds len(MentionCandidates(text)) without
// building them: MentionWords names per word, at most MaxMentionCandidates.
func MentionCandidatesAtMost(text string) int {
	words, in := 0, false
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			in = false
		case !in:
			in = true
			words++
		}
	}
	return min(MaxMentionCandidates, MentionWords*words)
}
