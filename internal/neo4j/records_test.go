package neo4j_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// TestScopedRecordsPage: a records listing of one or several scopes in
// creation order (records_page_scoped) pages through exactly the records
// the filter matches, in order (ties in creation time by id), in both
// directions, and its first page reads about a page of records, not the
// scope: a first page of 8 rows costs fewer db hits than the scope has
// records, for 600 records three to an instant (sorting the scope cost
// more than 3 per record) and for 400 records of one instant, as an
// ingestBatch writes them (sorting the instant's records by id cost as
// much).
func TestScopedRecordsPage(t *testing.T) {
	db := neo4jtest.DB(t)
	a, b, c := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-b", neo4jtest.Scope(t)+"-c"
	t.Cleanup(func() { _ = db.DeleteScope(t.Context(), b); _ = db.DeleteScope(t.Context(), c) })
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	type rec struct {
		id    string
		at    time.Time
		scope string
		sens  membrane.Sensitivity
	}
	var all []rec
	write := func(scope string, n, perInstant int) {
		p := membrane.DefaultPolicy()
		var batch []*membrane.Ingested
		for i := range n {
			// perInstant records to an instant, so that ties are broken
			// by id; every fifth record medium, for a filter to leave out.
			at := t0.Add(time.Duration(i/perInstant) * time.Second)
			sens := membrane.SensitivityLow
			if i%5 == 0 {
				sens = membrane.SensitivityMedium
			}
			in := fact(scope, fmt.Sprint("s", i), 0.5, nil)
			in.Sensitivity = &sens
			r, err := p.BuildRecord(in, at)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, &membrane.Ingested{Record: r, Audit: membrane.NewAuditEntry(r.ID, membrane.AuditCreate, "test", "", at)})
			all = append(all, rec{r.ID, at, scope, sens})
		}
		if _, err := db.CreateRecords(sysCtx(), nil, batch); err != nil {
			t.Fatal(err)
		}
	}
	write(a, 600, 3)
	write(b, 50, 3)
	write(c, 400, 400)

	window := func(from, to int) (*time.Time, *time.Time) {
		a, b := t0.Add(time.Duration(from)*time.Second), t0.Add(time.Duration(to)*time.Second)
		return &a, &b
	}
	for _, tc := range []struct {
		name          string
		scopes        []string
		desc          bool
		levels        []membrane.Sensitivity
		after, before *time.Time
	}{
		{"one scope, newest first", []string{a}, true, nil, nil, nil},
		{"one scope, oldest first", []string{a}, false, nil, nil, nil},
		{"two scopes, newest first", []string{a, b}, true, nil, nil, nil},
		{"two scopes and a repeated one, oldest first", []string{b, a, b}, false, nil, nil, nil},
		{"a filter, newest first", []string{a, b}, true, []membrane.Sensitivity{membrane.SensitivityLow}, nil, nil},
		{"one instant, newest first", []string{c}, true, nil, nil, nil},
		{"one instant and two scopes, oldest first", []string{c, b}, false, nil, nil, nil},
		{"a window, newest first", []string{a, b}, true, nil, nil, nil},
		{"a window, oldest first", []string{a}, false, nil, nil, nil},
	} {
		if strings.HasPrefix(tc.name, "a window") {
			// From the 50th second (inclusive) to the 120th (exclusive):
			// both ends fall on instants that hold records.
			tc.after, tc.before = window(50, 120)
		}
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			sorted := slices.Clone(all)
			slices.SortFunc(sorted, func(x, y rec) int {
				c := cmp.Or(x.at.Compare(y.at), cmp.Compare(x.id, y.id))
				if tc.desc {
					return -c
				}
				return c
			})
			for _, r := range sorted {
				inWindow := (tc.after == nil || !r.at.Before(*tc.after)) && (tc.before == nil || r.at.Before(*tc.before))
				if slices.Contains(tc.scopes, r.scope) && (tc.levels == nil || slices.Contains(tc.levels, r.sens)) && inWindow {
					want = append(want, r.id)
				}
			}
			f := membrane.RecordFilter{Scopes: tc.scopes, Sensitivities: tc.levels, CreatedAfter: tc.after, CreatedBefore: tc.before}
			order := membrane.RecordOrder{Field: membrane.OrderCreatedAt, Descending: tc.desc}
			var got []string
			page := membrane.Page{First: 37}
			for range len(want) {
				res, err := db.FindRecords(sysCtx(), f, order, page)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res.Items {
					got = append(got, r.ID)
				}
				if !res.PageInfo.HasNextPage {
					break
				}
				c, err := membrane.DecodeCursor(*res.PageInfo.EndCursor)
				if err != nil {
					t.Fatal(err)
				}
				page.After = c
			}
			if !slices.Equal(got, want) {
				t.Fatalf("paged %d records, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
			}
		})
	}

	_, early := window(0, 10) // the 30 oldest records of a, at the far end of a walk newest first
	for _, tc := range []struct {
		scope  string
		n      int64
		before *time.Time
	}{{a, 600, nil}, {c, 400, nil}, {a, 600, early}} {
		var p neo4j.Profile
		page, err := db.FindRecords(neo4j.WithProfile(sysCtx(), &p), membrane.RecordFilter{Scopes: []string{tc.scope}, CreatedBefore: tc.before}, membrane.DefaultRecordOrder, membrane.Page{First: 7})
		if err != nil || len(page.Items) != 7 {
			t.Fatalf("first page: %v, %v", page, err)
		}
		st := p.Statements()
		if len(st) != 1 {
			t.Fatalf("%d statements profiled, want 1", len(st))
		}
		if hits := dbHits(st[0].Plan); hits >= tc.n {
			t.Errorf("the first page of 7 of a scope of %d (created before %v) cost %d db hits: it read the scope, not a page", tc.n, tc.before, hits)
		}
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

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
