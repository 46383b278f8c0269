package eval_test

import (
	"math"
	"testing"

	"github.com/membrane/membrane/eval"
)

func TestMetrics(t *testing.T) {
	rel := eval.Relevance{"a": 2, "b": 1, "z": 0}
	l2 := math.Log2
	tests := []struct {
		name             string
		ranked           []string
		r3, r1, rr, ndcg float64
	}{
		{"ideal", []string{"a", "b", "x"}, 1, 0.5, 1, 1},
		{"swapped", []string{"b", "a"}, 1, 0.5, 1, (1 + 3/l2(3)) / (3 + 1/l2(3))},
		{"late", []string{"x", "y", "a"}, 0.5, 0, 1.0 / 3, (3 / l2(4)) / (3 + 1/l2(3))},
		{"grade 0 is irrelevant", []string{"z", "b"}, 0.5, 0, 0.5, (1 / l2(3)) / (3 + 1/l2(3))},
		{"nothing", nil, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		r3, r1 := eval.RecallAt(tt.ranked, rel, 3), eval.RecallAt(tt.ranked, rel, 1)
		rr, nd := eval.ReciprocalRank(tt.ranked, rel), eval.NDCGAt(tt.ranked, rel, 3)
		if math.Abs(r3-tt.r3) > 1e-12 || math.Abs(r1-tt.r1) > 1e-12 || math.Abs(rr-tt.rr) > 1e-12 || math.Abs(nd-tt.ndcg) > 1e-12 {
			t.Errorf("%s: recall@3 %v recall@1 %v rr %v ndcg@3 %v, want %v %v %v %v", tt.name, r3, r1, rr, nd, tt.r3, tt.r1, tt.rr, tt.ndcg)
		}
	}
	if eval.RecallAt([]string{"x"}, eval.Relevance{}, 5) != 1 || eval.NDCGAt(nil, eval.Relevance{"q": 0}, 5) != 1 {
		t.Error("no relevant records: recall and nDCG are 1")
	}
	// k cuts the ideal ranking too: two grade-2 records, k = 1.
	if got := eval.NDCGAt([]string{"a"}, eval.Relevance{"a": 2, "c": 2}, 1); got != 1 {
		t.Errorf("ndcg@1 = %v", got)
	}
}

func TestSessionRecall(t *testing.T) {
	sessionOf := map[string]string{"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
	tests := []struct {
		name   string
		ranked []string
		rel    eval.Relevance
		k      int
		want   float64
	}{
		{"any turn of the evidence session counts", []string{"a2"}, eval.Relevance{"a1": 1}, 10, 1},
		{"one of two sessions", []string{"c1", "a2"}, eval.Relevance{"a1": 1, "b1": 1}, 10, 0.5},
		{"both sessions", []string{"b1", "a1"}, eval.Relevance{"a1": 1, "b1": 1}, 10, 1},
		{"cut at k", []string{"c1", "a1"}, eval.Relevance{"a1": 1}, 1, 0},
		{"two evidence turns of one session are one session", []string{"a1"}, eval.Relevance{"a1": 1, "a2": 1}, 10, 1},
		{"grade 0 is no evidence", []string{"a1"}, eval.Relevance{"a1": 1, "b1": 0}, 10, 1},
		{"nothing relevant", nil, eval.Relevance{}, 10, 1},
	}
	for _, tt := range tests {
		if got := eval.SessionRecallAt(tt.ranked, tt.rel, sessionOf, tt.k); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestComparison(t *testing.T) {
	sessionOf := map[string]string{"a": "S1", "b": "S2", "x": "S1"}
	c := eval.NewComparison("retrieve", "bm25")
	// Two questions of one category, one of another.
	c.Add("p", eval.Score([]string{"a"}, eval.Relevance{"a": 1}, sessionOf), eval.Score(nil, eval.Relevance{"a": 1}, sessionOf))
	c.Add("p", eval.Score([]string{"x", "b"}, eval.Relevance{"b": 1}, sessionOf), eval.Score([]string{"b"}, eval.Relevance{"b": 1}, sessionOf))
	c.Add("q", eval.Score([]string{"x"}, eval.Relevance{"a": 1, "b": 1}, sessionOf), eval.Score([]string{"a", "b"}, eval.Relevance{"a": 1, "b": 1}, sessionOf))
	p := c.ByCategory["p"]
	if p[0].N != 2 || p[0].Mean().Recall1 != 0.5 || p[0].Mean().MRR != 0.75 || p[1].Mean().Recall10 != 0.5 {
		t.Errorf("category p: %+v", p)
	}
	a, b := c.Overall()
	tests := []struct {
		name      string
		got, want float64
	}{
		{"n", float64(a.N), 3},
		{"retrieve recall@1", a.Recall1, 1.0 / 3},
		{"retrieve recall@10", a.Recall10, 2.0 / 3},
		{"retrieve MRR", a.MRR, (1 + 0.5 + 0) / 3},
		{"retrieve session recall@10", a.SessRecall10, (1 + 1 + 0.5) / 3},
		{"bm25 recall@1", b.Recall1, (0 + 1 + 0.5) / 3},
		{"bm25 recall@5", b.Recall5, 2.0 / 3},
		{"bm25 MRR", b.MRR, 2.0 / 3},
		{"bm25 session recall@10", b.SessRecall10, 2.0 / 3},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if (eval.Scores{}).Mean() != (eval.Scores{}) {
		t.Error("the mean of nothing is zero")
	}
}

func TestGate(t *testing.T) {
	base := eval.Scores{Recall5: 0.50, Recall10: 0.60, MRR: 0.40, SessRecall10: 0.90}
	with := func(f func(*eval.Scores)) eval.Scores {
		s := base
		f(&s)
		return s
	}
	tests := []struct {
		name     string
		retrieve eval.Scores
		target   bool
		fails    int
	}{
		{"equal passes", base, false, 0},
		{"recall@5 below", with(func(s *eval.Scores) { s.Recall5 = 0.49 }), false, 1},
		{"recall@10 below", with(func(s *eval.Scores) { s.Recall10 = 0.59; s.MRR = 0.5 }), false, 1},
		{"MRR below", with(func(s *eval.Scores) { s.Recall10 = 0.7; s.MRR = 0.39 }), false, 1},
		{"session recall below", with(func(s *eval.Scores) { s.SessRecall10 = 0.89 }), false, 1},
		{"all below", eval.Scores{Recall5: 0.4, Recall10: 0.50, MRR: 0.30, SessRecall10: 0.8}, false, 4},
		{"above but short of the target, target off", with(func(s *eval.Scores) { s.Recall10 = 0.68 }), false, 0},
		{"above but short of the target, target on", with(func(s *eval.Scores) { s.Recall10 = 0.68 }), true, 1},
		{"target met", with(func(s *eval.Scores) { s.Recall10 = 0.75 }), true, 0},
		{"below and target on", with(func(s *eval.Scores) { s.Recall10 = 0.50 }), true, 2},
	}
	for _, tt := range tests {
		if got := eval.Gate(tt.retrieve, base, tt.target, true); len(got) != tt.fails {
			t.Errorf("%s: %q, want %d failures", tt.name, got, tt.fails)
		}
	}
	if got := eval.Gate(with(func(s *eval.Scores) { s.SessRecall10 = 0.89 }), base, false, false); len(got) != 0 {
		t.Errorf("session recall not gated: %q, want no failure", got)
	}
}

func TestSessionTarget(t *testing.T) {
	base := eval.Scores{SessRecall10: 0.80}
	for _, tt := range []struct {
		sess  float64
		fails int
	}{
		{0.80, 1}, {0.849, 1}, {0.85, 0}, {0.95, 0}, {0.70, 1},
	} {
		if got := eval.SessionTarget(eval.Scores{SessRecall10: tt.sess}, base); len(got) != tt.fails {
			t.Errorf("session recall %.3f against %.2f: %q, want %d failures", tt.sess, base.SessRecall10, got, tt.fails)
		}
	}
}
