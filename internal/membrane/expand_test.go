package membrane_test

import (
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
)

func TestExpansion(t *testing.T) {
	doc := func(score float64, terms string) membrane.FeedbackDoc {
		return membrane.FeedbackDoc{Terms: strings.Fields(terms), Score: score}
	}
	w := membrane.FeedbackWeight
	tests := []struct {
		name  string
		terms []string
		docs  []membrane.FeedbackDoc
		want  []membrane.WeightedTerm
	}{
		{name: "no feedback", terms: []string{"bill"}, docs: nil, want: []membrane.WeightedTerm{}},
		{
			// Terms in proportion to their frequency in the document;
			// the scope token does not count towards its length.
			name:  "weights",
			terms: []string{"bill"},
			docs:  []membrane.FeedbackDoc{doc(3, "#s0a1b bill invoic postgresql postgresql cluster")},
			want:  []membrane.WeightedTerm{{"postgresql", w}, {"cluster", w / 2}, {"invoic", w / 2}},
		},
		{
			// Not the query's own terms, whole identifiers, codes with
			// digits, words under three letters or the scope token.
			name:  "eligible terms",
			terms: []string{"migrat"},
			docs:  []membrane.FeedbackDoc{doc(1, "#s0a1b c3 s1 c3_s1 agent t11 migrat 0087 migrate_0087 n kubectl pg größe 数据")},
			want:  []membrane.WeightedTerm{{"agent", w}, {"größe", w}, {"kubectl", w}},
		},
		{
			name:  "at most FeedbackTerms, heaviest first, ties by term",
			terms: nil,
			docs:  []membrane.FeedbackDoc{doc(1, "zeta eta eta theta iota kappa lambda alpha beta gamma")},
			want: func() []membrane.WeightedTerm {
				out := []membrane.WeightedTerm{{"eta", w}}
				for _, s := range []string{"alpha", "beta", "gamma", "iota", "kappa", "lambda", "theta", "zeta"}[:membrane.FeedbackTerms-1] {
					out = append(out, membrane.WeightedTerm{Term: s, Weight: w / 2})
				}
				return out
			}(),
		},
		{
			// A word more than half of the matches read share is common
			// to them, no clue: it expands nothing.
			name:  "common words",
			terms: []string{"q"},
			docs:  []membrane.FeedbackDoc{doc(3, "alpha common"), doc(2, "common beta"), doc(1, "common gamma"), doc(1, "alpha delta")},
			want:  []membrane.WeightedTerm{{"alpha", w}},
		},
		{
			// Of words of equal weight, those that more of the other
			// matches read hold go first: with the query's own terms
			// required, a lent word re-ranks only the matches that hold
			// it ("reindex" lifts the run of a reindex, "curl" nothing).
			name:  "ties by the matches that hold the word",
			terms: []string{"search", "index"},
			docs: []membrane.FeedbackDoc{
				doc(3, "search index stale corrupt curl consum full reindex job"),
				doc(2, "search index full reindex products"), doc(1, "index reindex lag"), doc(1, "search kafka"),
				doc(1, "search consum"), doc(1, "index hours"),
			},
			want: []membrane.WeightedTerm{{"reindex", w}, {"consum", w}, {"full", w}, {"corrupt", w}, {"curl", w}}[:membrane.FeedbackTerms],
		},
		{
			// Only a document's first FeedbackDocTerms terms are read: a
			// word repeated after them weighs nothing.
			name:  "a long document's beginning",
			terms: []string{"q"},
			docs: []membrane.FeedbackDoc{doc(1, "#u alpha "+strings.Repeat("beta ", membrane.FeedbackDocTerms-2)+
				strings.Repeat("gamma ", 2*membrane.FeedbackDocTerms))},
			want: []membrane.WeightedTerm{{"beta", w}, {"alpha", w / float64(membrane.FeedbackDocTerms-2)}},
		},
		{
			// A match without score or terms lends nothing; only the
			// first (FeedbackDocs) of the others does.
			name:  "documents used",
			terms: []string{"index"},
			docs:  []membrane.FeedbackDoc{doc(0, "ignored"), doc(2, "#u"), doc(2, "index reindex"), doc(1, "topic drift")},
			want:  []membrane.WeightedTerm{{"reindex", w}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := membrane.Expansion(tt.terms, tt.docs)
			if len(got) != len(tt.want) {
				t.Fatalf("Expansion = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].Term != tt.want[i].Term || !near(got[i].Weight, tt.want[i].Weight) {
					t.Fatalf("Expansion = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
