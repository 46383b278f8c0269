package membrane

import (
	"regexp"
	"slices"
	"strings"
)

// Query expansion by pseudo-relevance feedback (RM3; docs/retrieval.md,
// "Query expansion"). A query's best full-text match is likely relevant,
// and its other words are likely the words of the records the query is
// after: "which database does billing use" best matches the fact
// "billing-service stores invoices in PostgreSQL cluster pg-billing", whose
// "postgresql" then lifts, among the records matching the query, the
// PostgreSQL entity ("relational database") and the billing outage that
// names it. The expanded query is the query's own terms, one of which a
// record must match, plus the feedback words at a lower weight (the
// store writes it in its own query syntax).
//
// The constants were chosen on the conversation eval (eval/README.md):
// one feedback document gave the best recall with
// vectors, MRR unchanged; more documents drifted to the second match's
// topic, and without the common-word rule (FeedbackScan) the expansion
// cost MRR on full text. Three words rather than five: within 0.01 on
// both evals, and each lent word costs the full-text query the walk of
// its postings.
const (
	// FeedbackDocs is how many of the best text matches (those the caller
	// sees in full, as the graph's seeds) lend their terms. Expansion
	// weighs several by their scores; more than one drifted to the second
	// match's topic.
	FeedbackDocs = 1
	// FeedbackScan is how many of the best text matches are read for
	// feedback: the FeedbackDocs lend their words, and a word most of the
	// readable ones share (more than half) is no clue to the one the query
	// is after, and expands nothing (a field name every record has, a word
	// of the whole topic). Few, so that reading them costs a fraction of
	// the candidates' own full-text query.
	FeedbackScan = 10
	// FeedbackTerms bounds the expansion terms added to a query.
	FeedbackTerms = 3
	// FeedbackDocTerms bounds what is read of each feedback document: its
	// full-text entry's first terms (the scope token among them). A
	// memory record is mostly far shorter; a long one lends the words of
	// its beginning. The retrieval statement pays the expansion per term
	// read, about 4 µs each: ten best matches of 11,000 terms each cost it
	// 460 ms unbounded, 11.5 ms bounded (and the feedback statement with
	// Go's expansion before it, unbounded, 96 ms).
	FeedbackDocTerms = 500
	// FeedbackWeight is the weight of the best expansion term, against 1
	// for each of the query's own terms; the others weigh in proportion
	// to their feedback weight.
	FeedbackWeight = 0.5
)

// FeedbackDoc is one feedback document: the index terms of a best text
// match (its full-text entry, with repeats) and its full-text score.
type FeedbackDoc struct {
	Terms []string
	Score float64
}

// WeightedTerm is a search term with its weight in the query.
type WeightedTerm struct {
	Term   string
	Weight float64
}

// Expansion returns the terms that expand a query of terms, given its best
// matches (best first; the first FeedbackDocs with a positive score and
// terms besides the scope token are used). A term's feedback weight is RM3's
//
//	Σ_d tf(term, d) / |d| · score(d) / Σ_d score(d)
//
// (|d| the document's terms). The FeedbackTerms heaviest terms that are
// not the query's own are returned, heaviest first, each weighted
// FeedbackWeight times its feedback weight over the heaviest's. Of terms
// equally heavy (most often each once in the match), those that more of
// the matches read hold go first, then by term: the query's own terms are
// required (the store's expanded query), so a lent term re-ranks only the matches
// that hold it, and one that none of them holds changes nothing.
// Only single words are eligible: not whole identifiers (their words are),
// not a full-text entry's scope token. Nothing without feedback. Of each
// document only its first FeedbackDocTerms terms are read.
//
// Expansion is the definition: the retrieval statement computes the same
// words in Cypher (cypher/retrieve_expansion.cypher), so that a retrieval
// is one statement, and TestExpansionStatement holds it to this function.
func Expansion(terms []string, docs []FeedbackDoc) []WeightedTerm {
	type used struct {
		doc FeedbackDoc
		n   int // its terms but the scope token
	}
	docs = slices.Clone(docs)
	for i := range docs {
		docs[i].Terms = docs[i].Terms[:min(len(docs[i].Terms), FeedbackDocTerms)]
	}
	var us []used
	total := 0.0
	for _, d := range docs {
		if len(us) == FeedbackDocs {
			break
		}
		n := 0
		for _, t := range d.Terms {
			if !isScopeToken(t) {
				n++
			}
		}
		if d.Score > 0 && n > 0 {
			us = append(us, used{d, n})
			total += d.Score
		}
	}
	weight := map[string]float64{}
	for _, u := range us {
		for _, t := range u.doc.Terms {
			if feedbackTerm(t) && !slices.Contains(terms, t) {
				weight[t] += u.doc.Score / total / float64(u.n)
			}
		}
	}
	// How many of the matches read hold each word: a word more than half
	// of them hold is common to them and lends nothing; among words of
	// equal weight, one that more of them hold goes first.
	in := map[string]int{}
	if read := docs[:min(len(docs), FeedbackScan)]; len(read) > 1 {
		for _, d := range read {
			seen := map[string]bool{}
			for _, t := range d.Terms {
				if _, ok := weight[t]; ok && !seen[t] {
					seen[t] = true
					in[t]++
				}
			}
		}
		for t, n := range in {
			if 2*n > len(read) {
				delete(weight, t)
			}
		}
	}
	out := make([]WeightedTerm, 0, len(weight))
	for t, w := range weight {
		out = append(out, WeightedTerm{Term: t, Weight: w})
	}
	slices.SortFunc(out, func(a, b WeightedTerm) int {
		if a.Weight != b.Weight {
			return cmpDesc(a.Weight, b.Weight)
		}
		if in[a.Term] != in[b.Term] {
			return in[b.Term] - in[a.Term]
		}
		return strings.Compare(a.Term, b.Term)
	})
	out = out[:min(len(out), FeedbackTerms)]
	if len(out) > 0 {
		top := out[0].Weight
		for i := range out {
			out[i].Weight = FeedbackWeight * out[i].Weight / top
		}
	}
	return out
}

// feedbackTerm reports whether an index term may expand a query: a word of
// at least three letters (marks allowed; FeedbackWordPattern), so not a
// whole identifier, a scope token, nor a code with digits (a version, a
// ticket, a turn's number): a code is specific to the records that carry
// it, and borrowing it from a match finds records that share it by
// accident, while a query that names one matches it already. Shorter
// stems are mostly the parts of identifiers ("n", "pg", "io").
func feedbackTerm(t string) bool { return feedbackWord.MatchString(t) }

// FeedbackWordPattern is the regular expression a whole term must match
// to expand a query (feedbackTerm). The retrieval statement tests it with
// Cypher's =~ (Java's regular expressions), Go with RE2: the two read
// this pattern alike, letters and marks by Unicode category, counted by
// code point.
const FeedbackWordPattern = `[\p{L}\p{M}]{3,}`

var feedbackWord = regexp.MustCompile(`^(?:` + FeedbackWordPattern + `)$`)

// isScopeToken reports whether an index term is a full-text entry's scope
// token (ScopeToken), which is no word of the record.
func isScopeToken(t string) bool { return strings.HasPrefix(t, "#") }
