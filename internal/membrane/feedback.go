package membrane

import (
	"fmt"
	"time"
)

// RecordUsage plans recording how one use of r ended, in one change with
// its audit entry (action outcome, the previous counts kept):
//
//   - competence: success or failure counted, success rate recomputed
//     from the counts, last use set;
//   - plan graph: one more execution, failure rate updated as a running
//     mean, last execution set;
//   - episodic: the episode's outcome, as ingestOutcome sets it.
//
// Only success counts as a success; failure and partial count as failures.
// Other types have no outcome (FAILED_PRECONDITION); retracted records
// cannot change (CONFLICT). The reference never updated these counts (§6.9).
func RecordUsage(r *Record, status OutcomeStatus, meta RevisionMeta, now time.Time) (*Change, error) {
	v := &validator{}
	meta.validate(v)
	oneOf(v, "status", status, outcomeStatuses)
	if err := v.err(); err != nil {
		return nil, err
	}
	if r.Type == TypeEpisodic {
		return RecordOutcome(r, IngestOutcome{Source: meta.Actor, TargetRecordID: r.ID, OutcomeStatus: status}, now)
	}
	if err := checkTarget(r, "record an outcome of", &meta); err != nil {
		return nil, err
	}
	now = now.UTC()
	n := next(r, now)
	prev := map[string]any{}
	ok := status == OutcomeSuccess
	switch p := r.Payload.(type) {
	case *CompetencePayload:
		np := *p
		perf := PerformanceStats{}
		if p.Performance != nil {
			perf = *p.Performance
			prev["performance"] = *p.Performance
		}
		if ok {
			perf.SuccessCount++
		} else {
			perf.FailureCount++
		}
		perf.SuccessRate = successRate(perf.SuccessCount, perf.FailureCount)
		perf.LastUsedAt = &now
		np.Performance = &perf
		n.Payload = &np
	case *PlanGraphPayload:
		np := *p
		m := PlanMetrics{}
		if p.Metrics != nil {
			m = *p.Metrics
			prev["metrics"] = *p.Metrics
		}
		failed := 0.0
		if !ok {
			failed = 1
		}
		m.FailureRate = (m.FailureRate*float64(m.ExecutionCount) + failed) / float64(m.ExecutionCount+1)
		m.ExecutionCount++
		m.LastExecutedAt = &now
		np.Metrics = &m
		n.Payload = &np
	default:
		return nil, Errorf(EPRECONDITION, "record %s is %s: outcomes apply to competence, plan_graph and episodic records", r.ID, r.Type)
	}
	a := audit(r, n, AuditOutcome, meta, why(meta, fmt.Sprintf("outcome %s recorded", status)), now)
	for k, v := range prev {
		if a.Previous == nil {
			a.Previous = map[string]any{}
		}
		a.Previous[k] = v
	}
	return &Change{Updates: []*Record{n}, Audits: []*AuditEntry{a}, Result: n}, nil
}
