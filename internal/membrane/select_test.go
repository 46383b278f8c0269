package membrane_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
)

// The selector's numbers are the reference's (§1.5): three equally weighted
// signals, 0.5 when a signal is unknown, a 30-day recency half-life, and
// confidence as the normalised gap between the two best scores.
func TestSelect(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	month := 30 * 24 * time.Hour
	skill := func(id string, conf float64, succ, fail int64, reinforced time.Time) membrane.SelectionCandidate {
		p := &membrane.CompetencePayload{SkillName: id}
		if succ+fail >= 0 {
			p.Performance = &membrane.PerformanceStats{SuccessCount: succ, FailureCount: fail}
		}
		return membrane.SelectionCandidate{Record: &membrane.Record{ID: id, Type: membrane.TypeCompetence, Confidence: conf,
			Lifecycle: membrane.Lifecycle{LastReinforcedAt: reinforced}, Payload: p}}
	}
	plan := func(id string, conf float64, runs int64, failureRate float64, reinforced time.Time) membrane.SelectionCandidate {
		return membrane.SelectionCandidate{Record: &membrane.Record{ID: id, Type: membrane.TypePlanGraph, Confidence: conf,
			Lifecycle: membrane.Lifecycle{LastReinforcedAt: reinforced},
			Payload:   &membrane.PlanGraphPayload{PlanID: id, Metrics: &membrane.PlanMetrics{ExecutionCount: runs, FailureRate: failureRate}}}}
	}
	sim := func(c membrane.SelectionCandidate, cos float64) membrane.SelectionCandidate {
		c.Similarity = &cos
		return c
	}
	type score struct {
		id                                 string
		score, applicability, success, rec float64
	}
	tests := []struct {
		name       string
		cands      []membrane.SelectionCandidate
		threshold  float64
		scores     []score
		confidence float64
		needsMore  bool
	}{
		{name: "no candidates", threshold: 0.7, confidence: 0, needsMore: true},
		{
			name:       "one candidate: confidence is its score",
			cands:      []membrane.SelectionCandidate{skill("a", 0.9, 8, 2, now)},
			threshold:  0.7,
			scores:     []score{{"a", 0.9, 0.9, 0.8, 1}},
			confidence: 0.9,
		},
		{
			name:       "one candidate without a payload scores 0.5",
			cands:      []membrane.SelectionCandidate{{Record: &membrane.Record{ID: "r", Confidence: 1}}},
			threshold:  0.7,
			scores:     []score{{"r", 0.5, 0.5, 0.5, 0.5}},
			confidence: 0.5,
			needsMore:  true,
		},
		{
			name:      "two candidates: normalised gap",
			cands:     []membrane.SelectionCandidate{plan("p", 0.6, 10, 0.5, now), skill("s", 0.9, 9, 1, now.Add(-month))},
			threshold: 0.7,
			scores: []score{
				{"s", (0.9 + 0.9 + 0.5) / 3, 0.9, 0.9, 0.5},
				{"p", (0.6 + 0.5 + 1) / 3, 0.6, 0.5, 1},
			},
			confidence: ((0.9+0.9+0.5)/3 - (0.6+0.5+1)/3) / ((0.9 + 0.9 + 0.5) / 3),
			needsMore:  true,
		},
		{
			name: "unknown signals are 0.5; a future reinforcement counts as now",
			cands: []membrane.SelectionCandidate{
				skill("norun", 1, 0, 0, time.Time{}),
				plan("noexec", 1, 0, 0.9, now.Add(time.Hour)),
			},
			threshold: 0.3,
			scores: []score{
				{"noexec", (1 + 0.5 + 1) / 3, 1, 0.5, 1},
				{"norun", (1 + 0.5 + 0.5) / 3, 1, 0.5, 0.5},
			},
			confidence: (2.5/3 - 2.0/3) / (2.5 / 3),
			needsMore:  true,
		},
		{
			name:      "a clear winner needs nothing more (reference test threshold 0.3)",
			cands:     []membrane.SelectionCandidate{skill("good", 1, 10, 0, now), skill("bad", 0.1, 0, 10, now.Add(-3*month))},
			threshold: 0.3,
			scores: []score{
				{"good", 1, 1, 1, 1},
				{"bad", (0.1 + 0 + 0.125) / 3, 0.1, 0, 0.125},
			},
			confidence: 1 - (0.1+0+0.125)/3,
		},
		{
			name:      "query similarity replaces confidence as applicability: (cos+1)/2",
			cands:     []membrane.SelectionCandidate{sim(skill("a", 0.1, 1, 1, now), 0.6), sim(skill("b", 1, 1, 1, now), -1)},
			threshold: 0.7,
			scores: []score{
				{"a", (0.8 + 0.5 + 1) / 3, 0.8, 0.5, 1},
				{"b", (0 + 0.5 + 1) / 3, 0, 0.5, 1},
			},
			confidence: (2.3/3 - 1.5/3) / (2.3 / 3),
			needsMore:  true,
		},
		{
			name:       "equal scores rank by id and have confidence 0",
			cands:      []membrane.SelectionCandidate{skill("z", 1, 1, 0, now), skill("y", 1, 1, 0, now)},
			threshold:  0.7,
			scores:     []score{{"y", 1, 1, 1, 1}, {"z", 1, 1, 1, 1}},
			confidence: 0,
			needsMore:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := membrane.Select(tt.cands, tt.threshold, now)
			if !near(s.Confidence, tt.confidence) || s.NeedsMore != tt.needsMore {
				t.Errorf("confidence %v needsMore %v, want %v %v", s.Confidence, s.NeedsMore, tt.confidence, tt.needsMore)
			}
			if len(s.Scores) != len(tt.scores) || len(s.Selected) != len(tt.scores) {
				t.Fatalf("scores %+v, want %+v", s.Scores, tt.scores)
			}
			for i, w := range tt.scores {
				g := s.Scores[i]
				if g.RecordID != w.id || s.Selected[i].ID != w.id || !near(g.Score, w.score) || !near(g.Applicability, w.applicability) ||
					!near(g.SuccessRate, w.success) || !near(g.Recency, w.rec) {
					t.Errorf("score %d = %+v (selected %s), want %+v", i, g, s.Selected[i].ID, w)
				}
			}
		})
	}
}
