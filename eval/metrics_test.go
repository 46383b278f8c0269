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
