package neo4j_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// reclassify revises record id to sensitivity sens and nothing else (its
// payload unchanged), as consolidation does when it raises a competence.
func reclassify(t *testing.T, db *neo4j.DB, id string, sens membrane.Sensitivity) {
	t.Helper()
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	_, err := db.Revise(ctx, nil, []string{id}, nil, func(locked, _ map[string]*membrane.Record) (*membrane.Change, error) {
		n := *locked[id]
		n.Sensitivity = sens
		n.Version++
		n.UpdatedAt = time.Now().UTC()
		return &membrane.Change{Updates: []*membrane.Record{&n}, Result: &n}, nil
	})
	if err != nil {
		t.Fatalf("reclassify %s to %s: %v", id, sens, err)
	}
}

// TestSealOnSensitivityChange: a revision that changes only a record's
// sensitivity across the encryption threshold changes how it is stored:
// raised to a sealed level, no property holds its text (payload sealed,
// plaintext terms and copies gone, blind terms written); lowered below it,
// the payload is in clear again with plain search terms and no blind terms,
// and a reader of the lower level finds it by text.
func TestSealOnSensitivityChange(t *testing.T) {
	db := neo4jtest.DB(t)
	words := []string{"lighthouse", "guards", "smuggler", "tunnels"}
	tests := []struct {
		name     string
		from, to membrane.Sensitivity
		sealed   bool
	}{
		{"medium to high", membrane.SensitivityMedium, membrane.SensitivityHigh, true},
		{"low to hyper", membrane.SensitivityLow, membrane.SensitivityHyper, true},
		{"high to medium", membrane.SensitivityHigh, membrane.SensitivityMedium, false},
		{"hyper to public", membrane.SensitivityHyper, membrane.SensitivityPublic, false},
		{"high to hyper", membrane.SensitivityHigh, membrane.SensitivityHyper, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			id := sealedFact(t, db, scope, tt.from, "lighthouse", "guards", "smuggler tunnels")
			reclassify(t, db, id, tt.to)
			p := nodeProps(t, id)
			if p["sensitivity"] != string(tt.to) {
				t.Fatalf("sensitivity = %v, want %s", p["sensitivity"], tt.to)
			}
			if tt.sealed {
				if !membrane.IsSealed(fmt.Sprint(p["payload"])) || p["encrypted"] != true || p["blindTerms"] == nil {
					t.Fatalf("not sealed: payload %v, encrypted %v, blindTerms %v", p["payload"], p["encrypted"], p["blindTerms"])
				}
				for k, v := range p {
					s := strings.ToLower(fmt.Sprint(v))
					for _, w := range words {
						if strings.Contains(s, w[:5]) {
							t.Errorf("property %s holds %q in clear: %s", k, w, s)
						}
					}
				}
				return
			}
			if membrane.IsSealed(fmt.Sprint(p["payload"])) || p["encrypted"] != nil || p["blindTerms"] != nil || p["blindKeyId"] != nil {
				t.Fatalf("still sealed: payload %v, encrypted %v, blindTerms %v", p["payload"], p["encrypted"], p["blindTerms"])
			}
			if terms := fmt.Sprint(p["searchTerms"]); !strings.Contains(terms, "lighthous") || p["subject"] != "lighthouse" {
				t.Fatalf("plain terms missing: searchTerms %q, subject %v", terms, p["subject"])
			}
			got, _ := retrieveAs(t, db, trustAt(tt.to, scope), "smugglers", time.Now().Add(time.Minute).UTC())
			if !slices.Equal(got, []string{id}) {
				t.Fatalf("retrieve after lowering: %v, want %s", got, id)
			}
		})
	}
}
