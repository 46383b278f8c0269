package neo4j_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
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

// The retrieval statement expands a query as membrane.Expansion and
// expandedLuceneQuery (lucene.go) define it: for every query over a scope of
// records written from a small vocabulary (so that words repeat within
// and across the best matches: weights, ties and the common-word rule all
// decide), the full-text query the statement builds is the one Go builds
// from the documents the statement read.
func TestExpansionStatement(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	vocab := make([]string, 12)
	for i := range vocab {
		vocab[i] = uniqueWord("voc")
	}
	// Besides words: a code with digits, a word of two letters and an
	// identifier, none of which may expand a query.
	others := []string{"v2", "pq", "snake_case_name"}
	rng := rand.New(rand.NewPCG(10, 13))
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ings []*membrane.Ingested
	for range 40 {
		var words []string
		// Skewed: some words are common, and some repeat in a record.
		for range 3 + rng.IntN(8) {
			words = append(words, vocab[rng.IntN(1+rng.IntN(len(vocab)))])
		}
		if rng.IntN(3) == 0 {
			words = append(words, others[rng.IntN(len(others))])
		}
		ings = append(ings, scopedFact(t, scope, words[0], strings.Join(words[1:], " "), 0.5, 0.5, now))
	}
	// A long record: the statement reads its first FeedbackDocTerms terms.
	long := strings.Repeat(vocab[0]+" "+vocab[1]+" ", membrane.FeedbackDocTerms) + vocab[2]
	ings = append(ings, scopedFact(t, scope, vocab[0], long, 0.5, 0.5, now))
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := db.CreateRecords(ctx, nil, ings); err != nil {
		t.Fatal(err)
	}
	if err := db.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Every word, and every pair: one of a pair may be held by few of the
	// other's matches (and then must not be lent to its own query).
	queries := slices.Clone(vocab)
	for i := range vocab {
		for j := i + 1; j < len(vocab); j++ {
			queries = append(queries, vocab[i]+" "+vocab[j])
		}
	}
	var expanded, tied, ruled int
	boosts := map[string]bool{}
	for _, text := range queries {
		q, err := membrane.NewRetrieveQuery(&text, nil, []string{scope}, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		docs, got, err := db.ExpansionOf(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if len(d.Terms) > membrane.FeedbackDocTerms {
				t.Fatalf("%q: the statement read %d terms of a document, at most %d", text, len(d.Terms), membrane.FeedbackDocTerms)
			}
		}
		exp := membrane.Expansion(q.Terms, docs)
		if want := neo4j.ScopedLucene(neo4j.ExpandedLuceneQuery(q.Terms, exp), []string{scope}); got != want {
			t.Errorf("%q: the statement built\n  %s\nGo builds\n  %s\nfrom %v", text, got, want, docs)
		}
		if len(exp) > 0 {
			expanded++
		}
		for _, e := range exp {
			boosts[neo4j.FormatBoost(e.Weight)] = true
		}
		for i := 1; i < len(exp); i++ {
			if exp[i].Weight == exp[i-1].Weight {
				tied++
				break
			}
		}
		if !slices.Equal(exp, membrane.Expansion(q.Terms, docs[:min(1, len(docs))])) {
			ruled++ // the other matches read changed what was lent
		}
	}
	t.Logf("%d queries, %d expanded, %d tied, %d ruled, boosts %v", len(queries), expanded, tied, ruled, boosts)
	// The comparison decides something only if the data exercise it.
	if expanded < len(queries)/2 || tied == 0 || ruled == 0 {
		t.Errorf("of %d queries %d expanded, %d with tied words, %d where the other matches changed the words: the fixture no longer exercises the expansion", len(queries), expanded, tied, ruled)
	}
}

// A retrieval is one statement, its query expanded in it, sent as one
// auto-commit round trip: one RUN, no BEGIN, no COMMIT. When gating leaves
// fewer candidates than asked for while the index had more, the statement
// must scan further: the retrieval then runs again in a read transaction
// (one snapshot for its statements) and still finds the caller's records.
func TestRetrieveOneRoundTrip(t *testing.T) {
	p := neo4jtest.NewBoltProxy(t)
	db := p.Open(t)
	shared := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	word, lent := uniqueWord("trip"), uniqueWord("lent")
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ings []*membrane.Ingested
	visible := map[string]bool{}
	for range 3 {
		in := scopedFact(t, scope, word, lent, 0.5, 0.5, now)
		visible[in.Record.ID] = true
		ings = append(ings, in)
	}
	ctx := membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("test"))
	if _, err := shared.CreateRecords(ctx, nil, ings); err != nil {
		t.Fatal(err)
	}
	if err := shared.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	type sent struct{ begin, commit, run int }
	count := func() sent {
		return sent{p.Sent(neo4jtest.SigBegin), p.Sent(neo4jtest.SigCommit), p.Sent(neo4jtest.SigRun)}
	}
	retrieve := func(t *testing.T) ([]string, sent) {
		t.Helper()
		q, err := membrane.NewRetrieveQuery(&word, nil, []string{scope}, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := count()
		r, err := db.Retrieve(membrane.NewContextWithTrust(t.Context(), trustAt(membrane.SensitivityLow, scope)), q, membrane.DefaultSelectionThreshold)
		if err != nil {
			t.Fatal(err)
		}
		after := count()
		var ids []string
		for _, h := range r.Hits {
			ids = append(ids, h.ID)
		}
		return ids, sent{after.begin - before.begin, after.commit - before.commit, after.run - before.run}
	}
	check := func(t *testing.T, ids []string) {
		t.Helper()
		if len(ids) != len(visible) {
			t.Fatalf("hits %v, want the %d records the caller sees", ids, len(visible))
		}
		for _, id := range ids {
			if !visible[id] {
				t.Fatalf("hit %s is not the caller's to see", id)
			}
		}
	}

	ids, s := retrieve(t)
	check(t, ids)
	if s != (sent{0, 0, 1}) {
		t.Errorf("a retrieval sent %d BEGIN, %d COMMIT and %d RUN, want 0, 0 and 1", s.begin, s.commit, s.run)
	}

	// Better matches the caller may not see in full (one level above:
	// redacted, no candidates) fill the first scan (100).
	var hidden []*membrane.Ingested
	for range 120 {
		in := scopedFact(t, scope, word+" "+word, word, 0.5, 0.5, now)
		in.Record.Sensitivity = membrane.SensitivityMedium
		hidden = append(hidden, in)
	}
	if _, err := shared.CreateRecords(ctx, nil, hidden); err != nil {
		t.Fatal(err)
	}
	if err := shared.AwaitSearchIndexes(t.Context()); err != nil {
		t.Fatal(err)
	}
	ids, s = retrieve(t)
	check(t, ids)
	// The statement alone, then in a transaction the same statement and
	// the scan further.
	if s != (sent{1, 1, 3}) {
		t.Errorf("a retrieval that scans further sent %d BEGIN, %d COMMIT and %d RUN, want 1, 1 and 3", s.begin, s.commit, s.run)
	}
}
