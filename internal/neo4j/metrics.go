package neo4j

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

var _ membrane.MetricsStore = (*DB)(nil)

// Metrics aggregates over the records t sees in full or redacted (and in
// scopes, when given), in one read query (cypher/metrics.cypher); the trust's ceiling and scopes are
// parameters of the match, so nothing outside them is counted.
func (db *DB) Metrics(ctx context.Context, t membrane.Trust, scopes []string, now time.Time) (*membrane.Metrics, error) {
	params := trustParams(t)
	params["only"], params["since"] = nil, now.Add(-24*time.Hour).UTC()
	if scopes != nil {
		params["only"] = scopes
	}
	row, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (*neo4j.Record, error) {
		return single(ctx, tx, cypher.Must("metrics"), params)
	})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	v := func(k string) any { x, _ := row.Get(k); return x }
	m := &membrane.Metrics{
		CollectedAt: now.UTC(), TotalRecords: integer(v("total")), RedactedRecords: integer(v("redacted")),
		ActiveRecords: integer(v("active")), PinnedRecords: integer(v("pinned")),
		AverageSalience: float(v("avgSalience")), AverageConfidence: float(v("avgConfidence")),
		CompetenceSuccessRate: float(v("competenceSuccessRate")), PlanReuseFrequency: float(v("planReuseFrequency")),
		Records: []membrane.RecordCount{}, AuditByAction: []membrane.ActionCount{},
	}
	hist, _ := v("histogram").([]any)
	for i, lo := range membrane.SalienceBuckets {
		b := membrane.SalienceBucket{Min: lo}
		if i+1 < len(membrane.SalienceBuckets) {
			hi := membrane.SalienceBuckets[i+1]
			b.Max = &hi
		}
		if i < len(hist) {
			b.Count = integer(hist[i])
		}
		m.SalienceHistogram = append(m.SalienceHistogram, b)
	}
	recs, _ := v("records").([]any)
	for _, x := range recs {
		r, _ := x.(map[string]any)
		m.Records = append(m.Records, membrane.RecordCount{Type: membrane.MemoryType(str(r["type"])),
			Status: membrane.RevisionStatus(str(r["status"])), Count: integer(r["count"])})
	}
	var reinforce, revisions int64
	audits, _ := v("audits").([]any)
	for _, x := range audits {
		a, _ := x.(map[string]any)
		c := membrane.ActionCount{Action: membrane.AuditAction(str(a["action"])), Count: integer(a["count"])}
		m.AuditByAction = append(m.AuditByAction, c)
		m.AuditEntries += c.Count
		if c.Action == membrane.AuditReinforce {
			reinforce += c.Count
		}
		if slices.Contains(membrane.RevisionActions, c.Action) {
			revisions += c.Count
		}
	}
	if m.TotalRecords > 0 {
		m.MemoryGrowthRate = float64(integer(v("recent"))) / float64(m.TotalRecords)
	}
	if m.AuditEntries > 0 {
		m.RetrievalUsefulness = float64(reinforce) / float64(m.AuditEntries)
		m.RevisionRate = float64(revisions) / float64(m.AuditEntries)
	}
	return m, nil
}
