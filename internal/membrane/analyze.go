package membrane

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// Text analysis: how memory text and queries become search terms. The same
// analysis runs on both sides (Go, not the index's analyzer), so what a
// query asks for is what a record was indexed under:
//
//   - Unicode text is NFKC-normalised; a token is a run of letters, marks
//     and digits. Each Han, Hiragana or Katakana character is a token of its
//     own (those scripts do not separate words with spaces).
//   - Apostrophes inside a word are dropped ("user's" is "users", "don't"
//     "dont").
//   - Identifiers are split into words: snake_case, kebab-case,
//     dotted.names (a '_', '-' or '.' between two letters or digits joins a
//     token into an identifier) and camelCase/PascalCase, acronyms included
//     ("HTTPServer" is "http" "server"; a plural acronym like "IDs" stays
//     one word). Letters and digits are not split ("ipv4", "sha256").
//   - Words are lower-cased, English stop words dropped and the rest
//     stemmed with the Snowball English stemmer ("databases" and "database"
//     are both "databas").
//   - An identifier is also kept whole: its lower-cased words (stop words
//     included, not stemmed) joined by '_', so "usesDatabase",
//     "uses-database", "uses.database" and "uses_database" all yield
//     "uses_database" and match each other exactly; each dotted segment that
//     is itself an identifier is kept whole too ("cfg.max_connections" yields
//     "max_connections" and "cfg_max_connections"). A camelCase word without
//     separators is also kept as one stemmed word ("PostgreSQL" yields
//     "postgresql"), so that it matches how people spell it in prose.
//
// Terms are lower-case letters, digits and '_' only: no term can carry
// Lucene syntax, so a query cannot change the search's shape.

// Analysis bounds.
const (
	// MaxAnalyzedBytes bounds the text analysed: the rest of a longer text
	// is not indexed (bounded work and property size per record).
	MaxAnalyzedBytes = 256 << 10
	// MaxIndexTerms bounds the terms AnalyzeText returns.
	MaxIndexTerms = 16384
	// maxWordBytes drops longer words (hashes, encoded blobs): nobody asks
	// for them by a part, and they would bloat the index.
	maxWordBytes = 64
	// maxWholeBytes drops longer whole identifiers.
	maxWholeBytes = 128
)

// AnalyzeText returns the index terms of s, in order, with repeats (term
// frequency counts for BM25). At most MaxIndexTerms, from the first
// MaxAnalyzedBytes of s.
func AnalyzeText(s string) []string {
	var out []string
	analyze(s, func(t string) bool {
		out = append(out, t)
		return len(out) < MaxIndexTerms
	})
	return out
}

// AnalyzeQuery returns the search terms of a query: AnalyzeText's terms
// without repeats, in order of first appearance, at most MaxQueryTerms. A
// query of only stop words or punctuation has none.
func AnalyzeQuery(s string) []string {
	var out []string
	seen := map[string]bool{}
	analyze(s, func(t string) bool {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
		return len(out) < MaxQueryTerms
	})
	return out
}

// analyze emits s's terms in order until emit returns false.
func analyze(s string, emit func(string) bool) {
	if len(s) > MaxAnalyzedBytes {
		n := MaxAnalyzedBytes
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // cut at a rune boundary
		}
		s = s[:n]
	}
	if !norm.NFKC.IsNormalString(s) {
		s = norm.NFKC.String(s)
	}
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		if isIdeograph(r) {
			if !emit(string(unicode.ToLower(r))) {
				return
			}
			i++
			continue
		}
		if !isWordRune(r) {
			i++
			continue
		}
		// A chunk: word runes, joined by connectors (and apostrophes)
		// that stand between two word runes.
		j := i + 1
		for j < len(rs) {
			if isWordRune(rs[j]) && !isIdeograph(rs[j]) {
				j++
				continue
			}
			if isConnector(rs[j]) || isApostrophe(rs[j]) {
				k := j
				for k < len(rs) && (isConnector(rs[k]) || isApostrophe(rs[k])) {
					k++
				}
				if k < len(rs) && isWordRune(rs[k]) && !isIdeograph(rs[k]) {
					j = k
					continue
				}
			}
			break
		}
		if !chunkTerms(rs[i:j], emit) {
			return
		}
		i = j
	}
}

// chunkTerms emits the terms of one chunk (a word or an identifier).
func chunkTerms(chunk []rune, emit func(string) bool) bool {
	// Apostrophes join letters of one word: drop them.
	if slices.ContainsFunc(chunk, isApostrophe) {
		c := make([]rune, 0, len(chunk))
		for _, r := range chunk {
			if !isApostrophe(r) {
				c = append(c, r)
			}
		}
		chunk = c
	}
	var segments [][]string
	for _, seg := range splitRunes(chunk, func(r rune) bool { return r == '.' }) {
		var words []string
		for _, part := range splitRunes(seg, isConnector) {
			for _, w := range splitCase(part) {
				words = append(words, strings.ToLower(string(w)))
			}
		}
		if len(words) > 0 {
			segments = append(segments, words)
		}
	}
	var all []string
	for _, words := range segments {
		for _, w := range words {
			if t, ok := wordTerm(w); ok && !emit(t) {
				return false
			}
		}
		if len(words) > 1 && len(segments) > 1 {
			if w := strings.Join(words, "_"); len(w) <= maxWholeBytes && !emit(w) {
				return false
			}
		}
		all = append(all, words...)
	}
	if len(all) > 1 {
		if w := strings.Join(all, "_"); len(w) <= maxWholeBytes && !emit(w) {
			return false
		}
		if len(segments) == 1 && !hasSeparator(chunk) {
			if t, ok := wordTerm(strings.Join(all, "")); ok && !emit(t) {
				return false
			}
		}
	}
	return true
}

// wordTerm is the term of one lower-case word: none for a stop word or an
// over-long word; the Snowball stem for a word of ASCII letters; the word
// itself otherwise (the English stemmer knows nothing of other scripts, and
// digits mark codes and versions).
func wordTerm(w string) (string, bool) {
	if w == "" || len(w) > maxWordBytes || stopWords[w] {
		return "", false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w, true
		}
	}
	return stem(w), true
}

// Stems are cached: memory text repeats its vocabulary, and the stemmer
// is most of the analysis' cost. The cache stops growing at maxStemCache
// words (at most 64 bytes each), so hostile text cannot grow it unbounded.
const maxStemCache = 1 << 16

var (
	stemCache     sync.Map
	stemCacheSize atomic.Int64
)

func stem(w string) string {
	if s, ok := stemCache.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if stemCacheSize.Load() < maxStemCache {
		if _, loaded := stemCache.LoadOrStore(strings.Clone(w), s); !loaded {
			stemCacheSize.Add(1)
		}
	}
	return s
}

// splitCase splits a run of letters and digits at camelCase boundaries:
// before an upper-case letter that follows a lower-case letter or a digit,
// and before the last upper-case letter of an acronym followed by
// lower-case ones ("HTTPServer": "HTTP" "Server"), except a plural acronym
// ("IDs", "APIs" stay whole).
func splitCase(rs []rune) [][]rune {
	var out [][]rune
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		if !unicode.IsUpper(cur) {
			continue
		}
		split := unicode.IsLower(prev) || unicode.IsDigit(prev)
		if !split && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) {
			plural := rs[i+1] == 's' && (i+2 == len(rs) || !unicode.IsLower(rs[i+2]))
			split = !plural
		}
		if split {
			out = append(out, rs[start:i])
			start = i
		}
	}
	if start < len(rs) {
		out = append(out, rs[start:])
	}
	return out
}

func splitRunes(rs []rune, sep func(rune) bool) [][]rune {
	var out [][]rune
	start := 0
	for i, r := range rs {
		if sep(r) {
			if i > start {
				out = append(out, rs[start:i])
			}
			start = i + 1
		}
	}
	if start < len(rs) {
		out = append(out, rs[start:])
	}
	return out
}

func hasSeparator(rs []rune) bool {
	return slices.ContainsFunc(rs, func(r rune) bool { return r == '.' || isConnector(r) })
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}

// isConnector reports the characters that join the words of an identifier
// when they stand between two letters or digits.
func isConnector(r rune) bool { return r == '_' || r == '-' || r == '.' }

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

func isIdeograph(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// stopWords are dropped from index terms and queries: words so common they
// only add noise to every score. Kept short on purpose: a word that can
// carry meaning in memory text ("may", "will", "us", "all") is not listed;
// neither is "id" (the contraction "I'd" is rare, the identifier common). Contractions appear without
// their apostrophe, as the analysis leaves them.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from has have how i if in into is it its
		of on or so that the their then there these they this to was were what when where which who why
		with you your we our do does did can could should would about after before over under not no
		am been being had having he him his she her hers me my mine them those than too very just
		im ive id youre youve weve theyre thats whats dont doesnt didnt isnt arent wasnt werent cant
		wont lets heres theres whos s t`) {
		stopWords[w] = true
	}
}
