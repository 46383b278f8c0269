package eval

import (
	"slices"
	"sort"
)

// RRFK is the usual constant of reciprocal-rank fusion: a document's
// score is Σ 1/(RRFK + rank) over the rankings it is in (rank from 1).
const RRFK = 60

// RRF fuses rankings by reciprocal rank, best first, at most limit ids;
// ties keep the order of first appearance. It is the naive hybrid the
// evals print beside retrieve: BM25 and vectors fused without the graph,
// time or any tuning.
func RRF(limit int, rankings ...[]string) []string {
	score := map[string]float64{}
	var order []string
	for _, r := range rankings {
		for i, id := range r {
			if _, ok := score[id]; !ok {
				order = append(order, id)
			}
			score[id] += 1 / float64(RRFK+i+1)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	return order[:min(limit, len(order))]
}

// VectorSearch ranks ids by the cosine similarity of their vectors to q,
// best first, at most limit (vectors are compared as given: the
// embedder's are unit length, so a dot product).
func VectorSearch(q []float64, ids []string, vecs [][]float64, limit int) []string {
	type scored struct {
		id string
		s  float64
	}
	all := make([]scored, 0, len(ids))
	for i, id := range ids {
		dot := 0.0
		for j := range min(len(q), len(vecs[i])) {
			dot += q[j] * vecs[i][j]
		}
		all = append(all, scored{id, dot})
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	out := make([]string, 0, min(limit, len(all)))
	for _, s := range all[:min(limit, len(all))] {
		out = append(out, s.id)
	}
	return out
}
