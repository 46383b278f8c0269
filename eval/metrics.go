// Package eval measures Membrane's retrieval quality on fixtures written
// for it: fixture.json (an engineering memory of every record type) and
// conversations/ (multi-session conversations and agent work logs, one
// EPISODIC record per turn, measured against a BM25 baseline, bm25.go):
// recall@k, mean reciprocal rank, nDCG@k and session recall. The evals
// themselves are eval_test.go and conversations_test.go (they need Neo4j):
//
//	NEO4J_URI=bolt://127.0.0.1:17687 go test ./eval -run 'TestRetrievalQuality|TestConversations' -v
package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

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

// SessionRecallAt is the share of the evidence sessions (the sessions of
// the records graded > 0) that hold at least one of the first k ranked
// records, relevant or not: whether a search found the right part of the
// conversation to read. sessionOf maps a record to its session; 1 when
// nothing is relevant.
func SessionRecallAt(ranked []string, rel Relevance, sessionOf map[string]string, k int) float64 {
	want := map[string]bool{}
	for key, g := range rel {
		if g > 0 {
			want[sessionOf[key]] = true
		}
	}
	if len(want) == 0 {
		return 1
	}
	found := map[string]bool{}
	for i, key := range ranked {
		if i == k {
			break
		}
		if s := sessionOf[key]; want[s] {
			found[s] = true
		}
	}
	return float64(len(found)) / float64(len(want))
}

// Scores are the metrics of one ranking, or their sum or mean over N.
type Scores struct {
	N                                                     int
	Recall1, Recall5, Recall10, MRR, NDCG10, SessRecall10 float64
}

// Score measures one ranking against the relevance of its query.
func Score(ranked []string, rel Relevance, sessionOf map[string]string) Scores {
	return Scores{N: 1,
		Recall1: RecallAt(ranked, rel, 1), Recall5: RecallAt(ranked, rel, 5), Recall10: RecallAt(ranked, rel, 10),
		MRR: ReciprocalRank(ranked, rel), NDCG10: NDCGAt(ranked, rel, 10), SessRecall10: SessionRecallAt(ranked, rel, sessionOf, 10)}
}

// Add sums two sets of scores.
func (s Scores) Add(o Scores) Scores {
	return Scores{N: s.N + o.N, Recall1: s.Recall1 + o.Recall1, Recall5: s.Recall5 + o.Recall5, Recall10: s.Recall10 + o.Recall10,
		MRR: s.MRR + o.MRR, NDCG10: s.NDCG10 + o.NDCG10, SessRecall10: s.SessRecall10 + o.SessRecall10}
}

// Mean divides a sum by its N (zero scores for N = 0).
func (s Scores) Mean() Scores {
	if s.N == 0 {
		return Scores{}
	}
	n := float64(s.N)
	return Scores{N: s.N, Recall1: s.Recall1 / n, Recall5: s.Recall5 / n, Recall10: s.Recall10 / n,
		MRR: s.MRR / n, NDCG10: s.NDCG10 / n, SessRecall10: s.SessRecall10 / n}
}

// Comparison holds the summed scores of two systems per category.
type Comparison struct {
	Names      [2]string // e.g. "retrieve", "bm25"
	ByCategory map[string]*[2]Scores
}

// NewComparison compares system a with system b.
func NewComparison(a, b string) *Comparison {
	return &Comparison{Names: [2]string{a, b}, ByCategory: map[string]*[2]Scores{}}
}

// Add records one question's scores for both systems.
func (c *Comparison) Add(category string, a, b Scores) {
	s := c.ByCategory[category]
	if s == nil {
		s = &[2]Scores{}
		c.ByCategory[category] = s
	}
	s[0], s[1] = s[0].Add(a), s[1].Add(b)
}

// Overall is the mean over every question of both systems.
func (c *Comparison) Overall() (a, b Scores) {
	// In key order: the float sums do not depend on map order.
	keys := make([]string, 0, len(c.ByCategory))
	for k := range c.ByCategory {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := c.ByCategory[k]
		a, b = a.Add(s[0]), b.Add(s[1])
	}
	return a.Mean(), b.Mean()
}

// Table prints the means per category (in the order given, then any
// other) and overall, each metric as "a / b".
func (c *Comparison) Table(order []string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-14s %4s  each cell: %s / %s\n", "category", "n", c.Names[0], c.Names[1])
	fmt.Fprintf(&sb, "%-14s %4s  %-13s %-13s %-13s %-13s %-13s %-13s\n", "", "", "recall@1", "recall@5", "recall@10", "MRR", "nDCG@10", "sessR@10")
	row := func(name string, a, b Scores) {
		fmt.Fprintf(&sb, "%-14s %4d  %.3f / %.3f %.3f / %.3f %.3f / %.3f %.3f / %.3f %.3f / %.3f %.3f / %.3f\n", name, a.N,
			a.Recall1, b.Recall1, a.Recall5, b.Recall5, a.Recall10, b.Recall10, a.MRR, b.MRR, a.NDCG10, b.NDCG10, a.SessRecall10, b.SessRecall10)
	}
	cats := slices.Clone(order)
	var rest []string
	for k := range c.ByCategory {
		if !slices.Contains(cats, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range append(cats, rest...) {
		if s := c.ByCategory[k]; s != nil {
			row(k, s[0].Mean(), s[1].Mean())
		}
	}
	a, b := c.Overall()
	row("all", a, b)
	return sb.String()
}

// TargetGain is the target on the conversation fixture with vectors:
// retrieve's recall@10 at least 25 % above the baseline's (measured: 0.839
// against 0.659, 1.27, on the fresh database scripts/test.sh runs the
// evals on; eval/README.md).
const TargetGain = 1.25

// SessionGain is the target for session coverage where it means
// something, every conversation in one memory with vectors (the pooled
// run of TestConversations): retrieve's session recall@10 at least this
// much above the baseline's. Within one conversation of 4 to 6 sessions
// the baseline covers 0.97 of them, which leaves no room for it.
const SessionGain = 0.05

// SessionTarget returns what fails of the session target: retrieve's
// session recall@10 short of the baseline's plus SessionGain.
func SessionTarget(retrieve, baseline Scores) []string {
	// 1e-9: exactly the target meets it, whatever the sum's rounding.
	if retrieve.SessRecall10+1e-9 < baseline.SessRecall10+SessionGain {
		return []string{fmt.Sprintf("session recall@10 %.3f misses the target %.3f + %.2f = %.3f",
			retrieve.SessRecall10, baseline.SessRecall10, SessionGain, baseline.SessRecall10+SessionGain)}
	}
	return nil
}

// Gate compares retrieve's overall scores with the baseline's and returns
// what fails: retrieve below the baseline on recall@5, recall@10, MRR or,
// with sessions, session recall@10 (a system that finds more turns but
// covers fewer of the sessions the evidence is in is not better) and, with
// target, a recall@10 short of TargetGain times the baseline's.
func Gate(retrieve, baseline Scores, target, sessions bool) []string {
	var fails []string
	for _, m := range []struct {
		name string
		a, b float64
		on   bool
	}{
		{"recall@5", retrieve.Recall5, baseline.Recall5, true},
		{"recall@10", retrieve.Recall10, baseline.Recall10, true},
		{"MRR", retrieve.MRR, baseline.MRR, true},
		{"session recall@10", retrieve.SessRecall10, baseline.SessRecall10, sessions},
	} {
		if m.on && m.a < m.b {
			fails = append(fails, fmt.Sprintf("%s %.3f is below the baseline's %.3f", m.name, m.a, m.b))
		}
	}
	if target && retrieve.Recall10 < TargetGain*baseline.Recall10 {
		fails = append(fails, fmt.Sprintf("recall@10 %.3f misses the target %.2f x %.3f = %.3f", retrieve.Recall10, TargetGain, baseline.Recall10, TargetGain*baseline.Recall10))
	}
	return fails
}
