package eval

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// BM25 parameters: the usual Okapi defaults, not tuned on the fixtures.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// BaselineTokens is the baseline's analyser: runs of letters and digits,
// lower-cased, English stop words dropped, each stemmed by the Snowball
// English stemmer. It is deliberately ordinary: an identifier is split at
// every non-alphanumeric character (max_connections -> max, connect) and
// nothing else (usesDatabase stays one token).
func BaselineTokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if english.IsStopWord(w) {
			continue
		}
		out = append(out, english.Stem(w, false))
	}
	return out
}

// BM25 is an in-memory Okapi BM25 index over a fixed list of documents,
// the baseline retrieve is measured against.
type BM25 struct {
	ids    []string
	tf     []map[string]int
	length []int
	df     map[string]int
	avgLen float64
}

// NewBM25 indexes texts[i] under ids[i].
func NewBM25(ids, texts []string) *BM25 {
	b := &BM25{ids: ids, tf: make([]map[string]int, len(texts)), length: make([]int, len(texts)), df: map[string]int{}}
	total := 0
	for i, text := range texts {
		toks := BaselineTokens(text)
		b.length[i] = len(toks)
		total += len(toks)
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			b.df[t]++
		}
		b.tf[i] = tf
	}
	if len(texts) > 0 {
		b.avgLen = float64(total) / float64(len(texts))
	}
	return b
}

// Search returns the ids of the documents that share a term with the
// query, best BM25 score first (ties in index order), at most limit.
// Repeated query terms count once.
func (b *BM25) Search(query string, limit int) []string {
	// A slice, not a map: the sum's order, hence ties, stay deterministic.
	var terms []string
	seen := map[string]bool{}
	for _, t := range BaselineTokens(query) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	n := float64(len(b.ids))
	type scored struct {
		i     int
		score float64
	}
	var hits []scored
	for i, tf := range b.tf {
		score := 0.0
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			// The Lucene form of idf: never negative.
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := 1 - BM25B + BM25B*float64(b.length[i])/b.avgLen
			score += idf * f * (BM25K1 + 1) / (f + BM25K1*norm)
		}
		if score > 0 {
			hits = append(hits, scored{i, score})
		}
	}
	sort.SliceStable(hits, func(x, y int) bool { return hits[x].score > hits[y].score })
	out := make([]string, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, b.ids[h.i])
	}
	return out
}
