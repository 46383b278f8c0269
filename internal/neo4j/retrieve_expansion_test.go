package neo4j_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// uniqueWord is a word no other test writes: letters only (a code with
// digits would not expand a query), from a new id.
func uniqueWord(prefix string) string {
	return prefix + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		if r >= '0' && r <= '9' {
			return 'a' + (r - '0')
		}
		return -1
	}, strings.ToLower(membrane.NewID()))
}

// A query finds the records that share no word with it but share the words
// of its best match (membrane.Expansion), and only the best match the
// caller sees in full lends its words: a record above the caller's
// ceiling, however well it matches, changes nothing the caller gets back.
func TestRetrieveQueryExpansion(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	query, shared, secret := uniqueWord("quor"), uniqueWord("lent"), uniqueWord("hid")
	now := time.Now().UTC().Truncate(time.Millisecond)
	match := scopedFact(t, scope, query, shared, 0.5, 0.5, now)                      // the caller's best match, lends shared
	related := scopedFact(t, scope, shared, "harbour", 0.5, 0.5, now)                // found through shared only
	hidden := scopedFact(t, scope, query, query+" "+query+" "+secret, 0.5, 0.5, now) // the best match of all, medium
	hidden.Record.Sensitivity = membrane.SensitivityMedium
	leak := scopedFact(t, scope, secret, "lighthouse", 0.5, 0.5, now) // found only through hidden's words
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, []*membrane.Ingested{match, related, hidden, leak}); err != nil {
		t.Fatal(err)
	}
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	retrieve := func(t *testing.T, trust membrane.Trust) []string {
		t.Helper()
		q, err := membrane.NewRetrieveQuery(&query, nil, []string{scope}, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		q.Now = now
		r, err := db.Retrieve(membrane.NewContextWithTrust(t.Context(), trust), q, membrane.DefaultSelectionThreshold)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range r.Hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	names := map[string]string{match.Record.ID: "match", related.Record.ID: "related", hidden.Record.ID: "hidden", leak.Record.ID: "leak"}
	named := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = names[id]
		}
		return out
	}

	// Cleared for medium: the hidden record is the best match and lends
	// its secret word, which finds leak; match lends nothing (one
	// feedback document).
	if got := named(retrieve(t, trustAt(membrane.SensitivityMedium, scope))); len(got) < 3 || got[0] != "hidden" || !slices.Contains(got, "leak") {
		t.Errorf("cleared caller: hits %v, want hidden first and leak among them", got)
	}
	// Low: match is its best match; related comes through match's word,
	// and nothing through the record it may not see in full.
	got := named(retrieve(t, trustAt(membrane.SensitivityLow, scope)))
	if len(got) != 2 || got[0] != "match" || got[1] != "related" {
		t.Errorf("low caller: hits %v, want [match related] (hidden's words must not reach leak)", got)
	}
}
