package membrane

import (
	"math"
	"slices"
	"strings"
	"time"
)

// SelectorRecencyHalfLife is the half-life of the selector's recency signal
// (reference §1.5: 30 days on the last reinforcement).
const SelectorRecencyHalfLife = 30 * 24 * time.Hour

// SelectionCandidate is a competence or plan_graph record up for selection.
type SelectionCandidate struct {
	Record *Record
	// Similarity is the cosine similarity of the record's embedding to the
	// query's, when both exist.
	Similarity *float64
}

// SelectionScore is one candidate's selection score and its signals.
type SelectionScore struct {
	RecordID      string
	Score         float64
	Applicability float64
	SuccessRate   float64
	Recency       float64
}

// Selection ranks competence and plan_graph candidates for a task and says
// how sure the ranking is (reference §1.5, RFC 15A.11).
type Selection struct {
	// Selected are the candidates, best first.
	Selected []*Record
	// Confidence is the gap between the best and second-best scores divided
	// by the best (the best score itself, capped at 1, for one candidate; 0
	// for none).
	Confidence float64
	// NeedsMore is Confidence < the threshold: the caller should gather
	// more information or ask before acting on the selection.
	NeedsMore bool
	// Scores are in the order of Selected.
	Scores []SelectionScore
}

// Select scores candidates with the reference's three equally weighted
// signals and ranks them:
//
//   - applicability: the record's confidence, or (cos+1)/2 of the query
//     similarity when there is one;
//   - success rate: success/(success+failure) of a competence with runs,
//     1 - failureRate of a plan with executions, else 0.5;
//   - recency: 2^(-age/30 days) of the last reinforcement (1 if in the
//     future, 0.5 if unknown).
//
// A candidate without a payload scores 0.5. Ties break by id.
func Select(cands []SelectionCandidate, threshold float64, now time.Time) Selection {
	if len(cands) == 0 {
		return Selection{Selected: []*Record{}, Scores: []SelectionScore{}, NeedsMore: true}
	}
	scores := make([]SelectionScore, len(cands))
	byID := make(map[string]*Record, len(cands))
	for i, c := range cands {
		scores[i] = scoreSelection(c, now)
		byID[c.Record.ID] = c.Record
	}
	slices.SortStableFunc(scores, func(a, b SelectionScore) int {
		if a.Score != b.Score {
			return cmpDesc(a.Score, b.Score)
		}
		return strings.Compare(a.RecordID, b.RecordID)
	})
	s := Selection{Scores: scores, Selected: make([]*Record, len(scores))}
	for i, sc := range scores {
		s.Selected[i] = byID[sc.RecordID]
	}
	if len(scores) == 1 {
		s.Confidence = math.Min(scores[0].Score, 1)
	} else if best := scores[0].Score; best > 0 {
		s.Confidence = (best - scores[1].Score) / best
	}
	s.NeedsMore = s.Confidence < threshold
	return s
}

func scoreSelection(c SelectionCandidate, now time.Time) SelectionScore {
	r := c.Record
	if r.Payload == nil {
		return SelectionScore{RecordID: r.ID, Score: 0.5, Applicability: 0.5, SuccessRate: 0.5, Recency: 0.5}
	}
	s := SelectionScore{RecordID: r.ID, Applicability: r.Confidence, SuccessRate: 0.5, Recency: 0.5}
	if c.Similarity != nil {
		s.Applicability = unitClamp((*c.Similarity + 1) / 2)
	}
	switch p := r.Payload.(type) {
	case *CompetencePayload:
		if p.Performance != nil {
			if n := p.Performance.SuccessCount + p.Performance.FailureCount; n > 0 {
				s.SuccessRate = float64(p.Performance.SuccessCount) / float64(n)
			}
		}
	case *PlanGraphPayload:
		if p.Metrics != nil && p.Metrics.ExecutionCount > 0 {
			s.SuccessRate = 1 - p.Metrics.FailureRate
		}
	}
	if at := r.Lifecycle.LastReinforcedAt; !at.IsZero() {
		if elapsed := now.Sub(at); elapsed <= 0 {
			s.Recency = 1
		} else {
			s.Recency = math.Exp2(-elapsed.Hours() / SelectorRecencyHalfLife.Hours())
		}
	}
	s.Score = (s.Applicability + s.SuccessRate + s.Recency) / 3
	return s
}
