package neo4j_test

import (
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

// A query's matches that share the words of its best match rank above
// those that do not (membrane.Expansion), and only a best match the
// caller sees in full lends its words: a record above the caller's
// ceiling, however well it matches, changes nothing the caller gets back.
// Every record matches the query word once or more; the ones the test
// looks for are the oldest, which the ranking's recency puts last unless
// the expansion lifts them.
func TestRetrieveQueryExpansion(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	query, shared, secret := uniqueWord("quor"), uniqueWord("lent"), uniqueWord("hid")
	now := time.Now().UTC().Truncate(time.Millisecond)
	older := now.Add(-time.Minute)
	fact := func(object string, at time.Time) *membrane.Ingested {
		return scopedFact(t, scope, query, object, 0.5, 0.5, at)
	}
	match := fact(query+" "+shared, now)            // the low caller's best match, lends shared
	related := fact(shared, older)                  // lifted by shared
	hidden := fact(query+" "+query+" "+secret, now) // the best match of all, medium
	hidden.Record.Sensitivity = membrane.SensitivityMedium
	leak := fact(secret, older) // lifted only by hidden's words
	names := map[string]string{match.Record.ID: "match", related.Record.ID: "related", hidden.Record.ID: "hidden", leak.Record.ID: "leak"}
	ings := []*membrane.Ingested{match, related, hidden, leak}
	for _, w := range []string{"harbour", "meadow", "quarry"} {
		d := fact(w, now)
		names[d.Record.ID] = w
		ings = append(ings, d)
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, ings); err != nil {
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
		var got []string
		for _, h := range r.Hits {
			got = append(got, names[h.ID])
		}
		return got
	}

	// Cleared for medium: the hidden record is the best match and lends
	// its secret word, which lifts leak; match lends nothing (one
	// feedback document).
	if got := retrieve(t, trustAt(membrane.SensitivityMedium, scope)); len(got) != 7 || got[0] != "hidden" || got[1] != "leak" {
		t.Errorf("cleared caller: hits %v, want hidden then leak", got)
	}
	// Low: match is its best match and lifts related; leak, which only
	// the record it may not see in full would lift, stays last.
	got := retrieve(t, trustAt(membrane.SensitivityLow, scope))
	if len(got) != 6 || got[0] != "match" || got[1] != "related" || got[5] != "leak" {
		t.Errorf("low caller: hits %v, want match, related, the others, leak last", got)
	}
}
