package graph_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestRecordsTextFilterSealed: records(filter: {text}) matches sealed
// (high, hyper) records through the keyed blind index for principals
// cleared for them, exactly as retrieve does: a high principal's text
// filter lists and counts the high records of its scopes, a medium one's
// never, in every variant of the listing (scoped or not, as of an instant),
// and each lists what retrieve finds for it.
func TestRecordsTextFilterSealed(t *testing.T) {
	in, out := neo4jtest.Scope(t), neo4jtest.Scope(t)
	high := reader("high", membrane.SensitivityHigh, in)
	hyper := reader("hyper", membrane.SensitivityHyper, in)
	medium := reader("medium", membrane.SensitivityMedium, in)
	highOut := reader("high-out", membrane.SensitivityHigh, out)
	c := newClient(t, high, hyper, medium, highOut)
	w := word()
	m := newRetrMatrix(t, c, in, out, w)
	now := time.Now().UTC().Add(time.Minute)
	tests := []struct {
		name  string
		p     membrane.Principal
		scope string
		want  []string
	}{
		{"high", high, in, []string{"at/in", "at/unscoped", "below/in", "below/unscoped", "one-above/in", "one-above/unscoped"}},
		{"hyper", hyper, in, []string{"at/in", "at/unscoped", "below/in", "below/unscoped", "one-above/in", "one-above/unscoped", "two-above/in", "two-above/unscoped"}},
		{"medium", medium, in, []string{"at/in", "at/unscoped", "below/in", "below/unscoped"}},
		{"high, other scope", highOut, out, []string{"at/out", "at/unscoped", "below/out", "below/unscoped", "one-above/out", "one-above/unscoped"}},
	}
	for _, tt := range tests {
		pc := c.as(tt.p.Actor)
		variants := []struct {
			name   string
			filter map[string]any
			asOf   *time.Time
		}{
			{"unscoped", map[string]any{"text": w}, nil},
			{"scoped", map[string]any{"text": w, "scopes": []any{tt.scope, ""}}, nil},
			{"as of", map[string]any{"text": w}, &now},
		}
		for _, v := range variants {
			t.Run(fmt.Sprintf("%s/%s", tt.name, v.name), func(t *testing.T) {
				got := pc.with(t).listText(v.filter, nil, 4, v.asOf)
				if names := m.named(got.ids); !slices.Equal(names, tt.want) || len(got.ids) != len(tt.want) {
					t.Fatalf("listed %v (%d ids), want %v", names, len(got.ids), tt.want)
				}
				if got.total != len(tt.want) {
					t.Errorf("totalCount %d, want %d", got.total, len(tt.want))
				}
			})
		}
		t.Run(tt.name+"/as retrieve", func(t *testing.T) {
			hits := m.named(hitIDs(pc.with(t).retrieve(map[string]any{"query": w, "limit": 20}).Retrieve.Hits))
			if !slices.Equal(hits, tt.want) {
				t.Fatalf("retrieve %v, want %v", hits, tt.want)
			}
		})
	}
}
