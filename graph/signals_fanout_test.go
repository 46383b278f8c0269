package graph_test

import (
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRetrieveGraphSignalFanoutGated: the entity and derived signals reach
// at most ContextFanout records per seed, and those are chosen among the
// records the caller sees in full. A visible record linked to a matching
// seed between many records the caller cannot see (one level above its
// ceiling) still gets the signal: which records the caller's signals
// reach, and so its hits and scores, never depend on records it cannot see.
func TestRetrieveGraphSignalFanoutGated(t *testing.T) {
	scope := neo4jtest.Scope(t)
	rd := reader("fanout", membrane.SensitivityLow, scope)
	c := newClient(t, rd)
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("fixture"))
	hiddenPerSide := membrane.ContextFanout + 5
	tests := []struct {
		name   string
		seed   func(text string) *membrane.Record
		link   func(from, seed string) membrane.Relation
		signal func(p struct{ Relevance, Fused, Text, Context, Entity, Derived float64 }) float64
	}{
		{"entity",
			func(text string) *membrane.Record {
				r, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEntity, Scope: &scope,
					Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{CanonicalName: text, PrimaryType: "service"}}}, time.Now().UTC())
				if err != nil {
					t.Fatal(err)
				}
				return r
			},
			func(from, seed string) membrane.Relation {
				return membrane.Relation{Predicate: membrane.PredMentions, SourceID: from, TargetID: seed, Weight: 1, CreatedAt: time.Now().UTC(), Actor: "fixture"}
			},
			func(p struct{ Relevance, Fused, Text, Context, Entity, Derived float64 }) float64 { return p.Entity }},
		{"derived",
			func(text string) *membrane.Record { return factRecord(t, scope, text, time.Now().UTC()) },
			func(from, seed string) membrane.Relation {
				return membrane.Relation{Predicate: membrane.PredDerivedFrom, SourceID: from, TargetID: seed, Weight: 1, CreatedAt: time.Now().UTC(), Actor: "fixture"}
			},
			func(p struct{ Relevance, Fused, Text, Context, Entity, Derived float64 }) float64 { return p.Derived }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := word()
			seed := tt.seed(q)
			stored(t, c, seed)
			var linked []*membrane.Record
			hidden := func() {
				for range hiddenPerSide {
					linked = append(linked, factRecord(t, scope, word(), time.Now().UTC(), func(r *membrane.Record) { r.Sensitivity = membrane.SensitivityMedium }))
				}
			}
			// Hidden records linked before and after the visible one, so
			// that the first ContextFanout links met from either end are
			// all hidden.
			hidden()
			visible := factRecord(t, scope, word(), time.Now().UTC())
			linked = append(linked, visible)
			hidden()
			stored(t, c, linked...)
			// One link per transaction, in order, as agents add them.
			for _, r := range linked {
				_, err := c.db.Revise(ctx, nil, []string{seed.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
					return &membrane.Change{Edges: []membrane.Relation{tt.link(r.ID, seed.ID)}, Result: locked[seed.ID]}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			got, order := retrieveParts(t, c.as(rd.Actor), map[string]any{"query": q, "scopes": []string{scope}, "limit": 20})
			h, ok := got[visible.ID]
			if !ok || tt.signal(h.Parts) <= 0 {
				t.Fatalf("the visible linked record is not reached (hits %v, parts %+v)", order, h.Parts)
			}
			if len(order) != 2 {
				t.Errorf("hits %v, want the seed and the visible record", order)
			}
		})
	}
}
