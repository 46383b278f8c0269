package neo4j_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// The records text filter reads a bounded number of full-text matches, and
// only the caller's: its index query names the scopes the request searches
// (as retrieve's does) and takes at most the best SetTextMatches matches.
// Here the bound is 20. Another scope's 30 stronger matches must not take
// the places of the caller's 5 (they would if the bound were applied
// across scopes), and 30 matches in the caller's own scope are cut to the
// bound, in the listing and in its count alike (before the bound, all 30
// were read, however many there were).
func TestRecordsTextFilterBounded(t *testing.T) {
	db := neo4jtest.Open(t)
	neo4j.SetTextMatches(db, 20)
	own, crowded, other := neo4jtest.Scope(t), neo4jtest.Scope(t), neo4jtest.Scope(t)
	word := "quillet" + strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, membrane.NewID())) + "x"
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ings []*membrane.Ingested
	for range 5 {
		ings = append(ings, scopedFact(t, own, word, "plain", 0.5, 0.5, now))
	}
	for range 30 {
		ings = append(ings, scopedFact(t, other, word, strings.Repeat(word+" ", 3), 0.5, 0.5, now))
		ings = append(ings, scopedFact(t, crowded, word, "plain", 0.5, 0.5, now))
	}
	sys := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(sys, nil, ings); err != nil {
		t.Fatal(err)
	}
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		trust  membrane.Trust
		scopes []string
		want   int64
	}{
		{"trusted with its scope", trustAt(membrane.SensitivityLow, own), nil, 5},
		{"all scopes, filtered", membrane.SystemTrust("test"), []string{own}, 5},
		{"its scope and unscoped, filtered", trustAt(membrane.SensitivityLow, own), []string{own, ""}, 5},
		{"more matches than the bound", membrane.SystemTrust("test"), []string{crowded}, 20},
		{"a scope it is not trusted with", trustAt(membrane.SensitivityLow, own), []string{other}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := membrane.NewContextWithTrust(t.Context(), tc.trust)
			f := membrane.RecordFilter{Text: word, Scopes: tc.scopes}
			if err := f.Validate(); err != nil {
				t.Fatal(err)
			}
			n, err := db.CountRecords(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			page, err := db.FindRecords(ctx, f, membrane.RecordOrder{Field: membrane.OrderCreatedAt, Descending: true}, membrane.Page{First: 100})
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.want || int64(len(page.Items)) != tc.want {
				t.Fatalf("count %d, page of %d, want %d", n, len(page.Items), tc.want)
			}
			for _, r := range page.Items {
				if !slices.Contains(append([]string{""}, tc.scopes...), r.Scope) && r.Scope != own {
					t.Fatalf("record %s of scope %q listed", r.ID, r.Scope)
				}
			}
		})
	}
}
