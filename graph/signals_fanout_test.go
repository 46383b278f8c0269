package graph_test

import (
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRetrieveGraphSignalFanoutGated: the entity and derived signals reach
// at most ContextFanout records per seed, and those are chosen among the
// records that can be hits: seen in full by the caller and live (not
// retracted, unless includeRetracted). A live visible record linked to a
// matching seed between many records the caller cannot see (one level
// above its ceiling), or between many retracted ones, still gets the
// signal: which records the caller's signals reach, and so its hits and
// scores, never depend on records that cannot be returned.
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
	fillers := []struct {
		name string
		opt  func(*membrane.Record)
	}{
		{"hidden", func(r *membrane.Record) { r.Sensitivity = membrane.SensitivityMedium }},
		{"retracted", func(r *membrane.Record) { r.Status, r.Salience = membrane.StatusRetracted, 0 }},
	}
	for _, tt := range tests {
		for _, fl := range fillers {
			t.Run(tt.name+"/"+fl.name, func(t *testing.T) {
				q := word()
				seed := tt.seed(q)
				stored(t, c, seed)
				var linked []*membrane.Record
				hidden := func() {
					for range hiddenPerSide {
						linked = append(linked, factRecord(t, scope, word(), time.Now().UTC(), fl.opt))
					}
				}
				// Fillers linked before and after the visible one, so that
				// the first ContextFanout links met from either end are all
				// fillers.
				hidden()
				visible := factRecord(t, scope, word(), time.Now().UTC())
				linked = append(linked, visible)
				hidden()
				stored(t, c, linked...)
				// One link per transaction, in order, as agents add them.
				for _, r := range linked {
					_, err := c.DB.Revise(ctx, nil, []string{seed.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
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
}

// TestRetrieveGraphSignalFanoutNewest: when more than ContextFanout records
// can take an entity's or a seed's signal, the newest ContextFanout do
// (ties by id), whatever order their links were written in: the fanout is
// a documented choice, not the store's order. Both link orders are tried,
// so that no store order can pass by chance.
func TestRetrieveGraphSignalFanoutNewest(t *testing.T) {
	scope := neo4jtest.Scope(t)
	rd := reader("fanout-newest", membrane.SensitivityLow, scope)
	c := newClient(t, rd)
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("fixture"))
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	for _, newestFirst := range []bool{true, false} {
		name := "oldest linked first"
		if newestFirst {
			name = "newest linked first"
		}
		t.Run(name, func(t *testing.T) {
			q := word()
			seed, err := membrane.DefaultPolicy().BuildRecord(membrane.RecordInput{Type: membrane.TypeEntity, Scope: &scope,
				Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{CanonicalName: q, PrimaryType: "service"}}}, base)
			if err != nil {
				t.Fatal(err)
			}
			n := membrane.ContextFanout + 5
			linked := make([]*membrane.Record, n)
			for i := range linked {
				// linked[i] is i minutes newer than linked[0].
				linked[i] = factRecord(t, scope, word(), base.Add(time.Duration(i)*time.Minute))
			}
			stored(t, c, append([]*membrane.Record{seed}, linked...)...)
			order := slices.Clone(linked)
			if newestFirst {
				slices.Reverse(order)
			}
			for _, r := range order {
				_, err := c.DB.Revise(ctx, nil, []string{seed.ID}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
					return &membrane.Change{Edges: []membrane.Relation{{Predicate: membrane.PredMentions, SourceID: r.ID, TargetID: seed.ID,
						Weight: 1, CreatedAt: time.Now().UTC(), Actor: "fixture"}}, Result: locked[seed.ID]}, nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			got, _ := retrieveParts(t, c.as(rd.Actor), map[string]any{"query": q, "scopes": []string{scope}, "limit": 100})
			for i, r := range linked {
				reached := got[r.ID].Parts.Entity > 0
				if want := i >= n-membrane.ContextFanout; reached != want {
					t.Errorf("linked record %d of %d (oldest first): reached %v, want %v", i, n, reached, want)
				}
			}
		})
	}
}
