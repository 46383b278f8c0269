// Package eval measures Membrane's retrieval quality on a fixture written
// for it (fixture.json): recall@k, mean reciprocal rank and nDCG@k of the
// full-text ranking. The eval itself is eval_test.go (it needs Neo4j):
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test ./eval -run TestRetrievalQuality -v
package eval

import "math"

// Relevance grades the records of one query by key: 2 answers it, 1 is
// related; missing keys are irrelevant (0).
type Relevance map[string]int

// RecallAt is the share of the relevant records (grade > 0) found among
// the first k ranked; 1 when nothing is relevant.
func RecallAt(ranked []string, rel Relevance, k int) float64 {
	total, found := 0, 0
	for _, g := range rel {
		if g > 0 {
			total++
		}
	}
	if total == 0 {
		return 1
	}
	for i, key := range ranked {
		if i == k {
			break
		}
		if rel[key] > 0 {
			found++
		}
	}
	return float64(found) / float64(total)
}

// ReciprocalRank is 1/rank of the first relevant record, 0 when none is
// ranked.
func ReciprocalRank(ranked []string, rel Relevance) float64 {
	for i, key := range ranked {
		if rel[key] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAt is the discounted cumulative gain of the first k ranked, with gain
// 2^grade - 1 and discount log2(rank + 1), divided by that of the ideal
// ranking; 1 when nothing is relevant.
func NDCGAt(ranked []string, rel Relevance, k int) float64 {
	dcg := 0.0
	for i, key := range ranked {
		if i == k {
			break
		}
		dcg += gain(rel[key]) / math.Log2(float64(i+2))
	}
	var grades []int
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	if len(grades) == 0 {
		return 1
	}
	// The ideal ranking: highest grades first.
	for i := range grades {
		for j := i + 1; j < len(grades); j++ {
			if grades[j] > grades[i] {
				grades[i], grades[j] = grades[j], grades[i]
			}
		}
	}
	ideal := 0.0
	for i, g := range grades {
		if i == k {
			break
		}
		ideal += gain(g) / math.Log2(float64(i+2))
	}
	return dcg / ideal
}

func gain(grade int) float64 {
	if grade <= 0 {
		return 0
	}
	return math.Exp2(float64(grade)) - 1
}
