package eval_test

import (
	"slices"
	"testing"

	"github.com/membrane/membrane/eval"
)

func TestRRF(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		rankings [][]string
		want     []string
	}{
		{"nothing", 5, nil, []string{}},
		{"one ranking keeps its order", 5, [][]string{{"a", "b", "c"}}, []string{"a", "b", "c"}},
		{"in both beats first in one", 5, [][]string{{"a", "b"}, {"c", "b"}}, []string{"b", "a", "c"}},
		{"ties keep first appearance", 5, [][]string{{"a"}, {"b"}}, []string{"a", "b"}},
		{"limit", 2, [][]string{{"a", "b", "c"}, {"c"}}, []string{"c", "a"}},
	}
	for _, tt := range tests {
		if got := eval.RRF(tt.limit, tt.rankings...); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestVectorSearch(t *testing.T) {
	ids := []string{"x", "y", "z"}
	vecs := [][]float64{{1, 0}, {0.6, 0.8}, {0, 1}}
	if got := eval.VectorSearch([]float64{0, 1}, ids, vecs, 2); !slices.Equal(got, []string{"z", "y"}) {
		t.Errorf("got %v, want z, y", got)
	}
}
