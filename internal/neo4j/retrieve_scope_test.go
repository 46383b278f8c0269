package neo4j_test

import (
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// scopedFact builds a fact in scope whose subject and object are the given
// words, with salience and confidence fixed (pinned, so it does not decay).
func scopedFact(t *testing.T, scope, subject, object string, salience, confidence float64, now time.Time) *membrane.Ingested {
	t.Helper()
	ing, err := membrane.DefaultPolicy().BuildObservation(membrane.IngestObservation{
		IngestMeta: membrane.IngestMeta{Source: "agent", Scope: &scope, Timestamp: &now},
		Subject:    subject, Predicate: "is", Object: object}, now)
	if err != nil {
		t.Fatal(err)
	}
	r := ing.Record
	r.Salience, r.Lifecycle.BaseSalience, r.Confidence, r.Lifecycle.Pinned = salience, salience, confidence, true
	return ing
}

// A caller's candidates are its own best matches however many better
// matches another scope holds: the scope restriction is part of the index
// query, not only of the gate after it. Here the other scope's 150 matches
// all score between the caller's two records, more than the first scan
// reads (100): when the scan was taken across scopes, it held only the
// caller's best text match, which filled the limit, and the caller's
// weaker text match — ranked first by its salience and confidence — was
// never a candidate.
func TestRetrieveScopeInsideIndexQuery(t *testing.T) {
	db := neo4jtest.DB(t)
	own, other := neo4jtest.Scope(t), neo4jtest.Scope(t)
	word := uniqueWord("zorblax")
	now := time.Now().UTC().Truncate(time.Millisecond)
	strong := scopedFact(t, own, word, strings.Repeat(word+" ", 3), 0.05, 0.05, now)
	weak := scopedFact(t, own, word, "plain", 1, 1, now)
	ings := []*membrane.Ingested{strong, weak}
	for range 150 {
		ings = append(ings, scopedFact(t, other, word, word, 0.5, 0.5, now))
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, ings); err != nil {
		t.Fatal(err)
	}
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		trust  membrane.Trust
		scopes []string
	}{
		{"trusted with its scope", trustAt(membrane.SensitivityLow, own), nil},
		{"all scopes, filtered", membrane.SystemTrust("test"), []string{own}},
		{"its scope and unscoped, filtered", trustAt(membrane.SensitivityLow, own), []string{own, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := int64(1)
			q, err := membrane.NewRetrieveQuery(&word, nil, tc.scopes, nil, &limit, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			q.Now = now
			r, err := db.Retrieve(membrane.NewContextWithTrust(t.Context(), tc.trust), q, membrane.DefaultSelectionThreshold)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Hits) != 1 || r.Hits[0].ID != weak.Record.ID {
				var got []string
				for _, h := range r.Hits {
					got = append(got, h.ID)
				}
				t.Fatalf("hits %v, want the salient weaker match %s first (strong %s)", got, weak.Record.ID, strong.Record.ID)
			}
		})
	}
}
