package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// named maps ids to fixture names, sorted; ids of no fixture are kept as
// they are, so that a stray record shows up in a failure.
func named(names map[string]string, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if n, ok := names[id]; ok {
			out = append(out, n)
		} else {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func tagged(tags ...string) func(*membrane.Record) {
	return func(r *membrane.Record) { r.Tags = tags }
}

const graphRootsQ = `query($in: RetrieveGraphInput!) { retrieveGraph(input: $in) { nodes { root record { id } } } }`

func (c *client) graphRoots(in map[string]any) []string {
	c.T.Helper()
	var out struct {
		RetrieveGraph struct {
			Nodes []struct {
				Root   bool
				Record struct{ ID string }
			}
		}
	}
	c.Do(graphRootsQ, map[string]any{"in": in}, &out)
	var ids []string
	for _, n := range out.RetrieveGraph.Nodes {
		if n.Root {
			ids = append(ids, n.Record.ID)
		}
	}
	return ids
}

// TestRetrieveTagsFilter: retrieve and retrieveGraph's roots keep only the
// records carrying all of the tags asked for, with and without a query,
// like the records filter's tags.
func TestRetrieveTagsFilter(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	w := word()
	now := time.Now().UTC()
	recs := map[string]*membrane.Record{
		"a":    factRecord(t, scope, w, now, tagged("a")),
		"ab":   factRecord(t, scope, w, now.Add(-time.Minute), tagged("a", "b")),
		"b":    factRecord(t, scope, w, now.Add(-2*time.Minute), tagged("b")),
		"none": factRecord(t, scope, w, now.Add(-3*time.Minute)),
	}
	names := map[string]string{}
	var all []*membrane.Record
	for n, r := range recs {
		names[r.ID] = n
		all = append(all, r)
	}
	stored(t, c, all...)
	tests := []struct {
		name string
		tags []string
		want []string
	}{
		{"one tag", []string{"a"}, []string{"a", "ab"}},
		{"all of two tags", []string{"a", "b"}, []string{"ab"}},
		{"other tag", []string{"b"}, []string{"ab", "b"}},
		{"tag no record carries", []string{"c"}, []string{}},
		{"no tags", nil, []string{"a", "ab", "b", "none"}},
	}
	for _, tt := range tests {
		for _, query := range []string{w, ""} {
			t.Run(fmt.Sprintf("%s/query=%v", tt.name, query != ""), func(t *testing.T) {
				in := map[string]any{"scopes": []any{scope}, "limit": 20}
				if query != "" {
					in["query"] = query
				}
				if tt.tags != nil {
					in["tags"] = tt.tags
				}
				c := c.with(t)
				if got := named(names, hitIDs(c.retrieve(in).Retrieve.Hits)); !slices.Equal(got, tt.want) {
					t.Errorf("retrieve: %v, want %v", got, tt.want)
				}
				delete(in, "limit")
				in["rootLimit"], in["maxHops"] = 20, 0
				if got := named(names, c.graphRoots(in)); !slices.Equal(got, tt.want) {
					t.Errorf("retrieveGraph roots: %v, want %v", got, tt.want)
				}
			})
		}
	}
	t.Run("bad tags", func(t *testing.T) {
		for _, q := range []string{retrieveQ, graphRootsQ} {
			errs := c.with(t).Fail("BAD_USER_INPUT", q, map[string]any{"in": map[string]any{"query": w, "tags": []any{"a", ""}}})
			if f := fmt.Sprint(errs[0].Extensions["fields"]); !strings.Contains(f, "input.tags[1]") {
				t.Errorf("fields %s", f)
			}
		}
	})
}

// textListing is records(filter: {text}) paged through to the end.
type textListing struct {
	ids   []string
	total int
	pages int
}

func (c *client) listText(filter map[string]any, order map[string]any, first int, asOf *time.Time) textListing {
	c.T.Helper()
	var out textListing
	var after any
	vars := map[string]any{"f": filter, "o": order, "n": first}
	if asOf != nil {
		vars["at"] = asOf.Format(time.RFC3339Nano)
	}
	for {
		vars["after"] = after
		var page listed
		c.Do(`query($f: RecordFilter, $o: RecordOrder, $n: Int, $after: String, $at: DateTime) {
		  records(filter: $f, orderBy: $o, first: $n, after: $after, asOf: $at) { nodes { id } totalCount pageInfo { hasNextPage endCursor } } }`, vars, &page)
		out.pages++
		for _, n := range page.Records.Nodes {
			out.ids = append(out.ids, n.ID)
		}
		if page.Records.TotalCount != nil {
			out.total = *page.Records.TotalCount
		}
		if !page.Records.PageInfo.HasNextPage || out.pages > 50 {
			return out
		}
		after = *page.Records.PageInfo.EndCursor
	}
}

// TestRecordsTextFilter: records(filter: {text}) lists exactly the records
// matching the text (any of its words) with the other filters, in the
// order asked for, paged by keyset, counted by totalCount.
func TestRecordsTextFilter(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	w1, w2, other := word(), word(), word()
	base := time.Now().UTC().Add(-time.Hour)
	var recs []*membrane.Record
	type fixture struct {
		rec   *membrane.Record
		words string
	}
	var fx []fixture
	add := func(text string, opts ...func(*membrane.Record)) {
		r := factRecord(t, scope, text, base.Add(time.Duration(len(recs))*time.Second), opts...)
		r.Salience = float64(len(recs)%5) / 4
		r.Lifecycle.BaseSalience = r.Salience
		recs = append(recs, r)
		fx = append(fx, fixture{r, text})
	}
	for i := range 9 {
		if i%3 == 0 {
			add(w1+" first", tagged("t"))
		} else {
			add(w1 + " first")
		}
	}
	for range 3 {
		add(w2 + " second")
	}
	add(w1+" "+w2+" both", tagged("t"))
	add(w1 + " " + w2 + " both")
	for range 4 {
		add(other + " neither")
	}
	stored(t, c, recs...)

	// want lists the fixtures whose text has any of words and pass keep, in
	// order by less.
	want := func(words []string, keep func(*membrane.Record) bool, less func(a, b *membrane.Record) bool) []string {
		var rs []*membrane.Record
		for _, f := range fx {
			hit := false
			for _, w := range words {
				hit = hit || strings.Contains(f.words, w)
			}
			if hit && (keep == nil || keep(f.rec)) {
				rs = append(rs, f.rec)
			}
		}
		sort.Slice(rs, func(i, j int) bool { return less(rs[i], rs[j]) })
		ids := make([]string, len(rs))
		for i, r := range rs {
			ids[i] = r.ID
		}
		return ids
	}
	newest := func(a, b *membrane.Record) bool { return a.CreatedAt.After(b.CreatedAt) }
	salienceAsc := func(a, b *membrane.Record) bool {
		if a.Salience != b.Salience {
			return a.Salience < b.Salience
		}
		return a.ID < b.ID
	}
	hasT := func(r *membrane.Record) bool { return slices.Contains(r.Tags, "t") }
	now := time.Now().UTC()
	tests := []struct {
		name   string
		filter map[string]any
		order  map[string]any
		asOf   *time.Time
		want   []string
	}{
		{"one word", map[string]any{"text": w1}, nil, nil, want([]string{w1}, nil, newest)},
		{"any of two words", map[string]any{"text": w1 + " " + w2}, nil, nil, want([]string{w1, w2}, nil, newest)},
		{"with tags", map[string]any{"text": w1, "tags": []any{"t"}}, nil, nil, want([]string{w1}, hasT, newest)},
		{"with minSalience", map[string]any{"text": w2, "minSalience": 0.5}, nil, nil,
			want([]string{w2}, func(r *membrane.Record) bool { return r.Salience >= 0.5 }, newest)},
		{"ordered by salience", map[string]any{"text": w1}, map[string]any{"field": "SALIENCE", "direction": "ASC"}, nil, want([]string{w1}, nil, salienceAsc)},
		{"as of now", map[string]any{"text": w1}, nil, &now, want([]string{w1}, nil, newest)},
		{"as of before the records", map[string]any{"text": w1}, nil, &base, want([]string{w1}, func(r *membrane.Record) bool { return !r.CreatedAt.After(base) }, newest)},
		{"blank text filters nothing", map[string]any{"text": "  "}, nil, nil, want([]string{w1, w2, other}, nil, newest)},
		{"only stop words match nothing", map[string]any{"text": "the and of"}, nil, nil, []string{}},
		{"a word no record has", map[string]any{"text": word()}, nil, nil, []string{}},
	}
	for _, tt := range tests {
		for _, scoped := range []bool{true, false} {
			if !scoped && tt.name == "blank text filters nothing" {
				// Unscoped, a blank text lists every scope's records of
				// the shared database: there is no fixed answer to check.
				continue
			}
			t.Run(fmt.Sprintf("%s/scoped=%v", tt.name, scoped), func(t *testing.T) {
				f := map[string]any{}
				for k, v := range tt.filter {
					f[k] = v
				}
				if scoped {
					f["scopes"] = []any{scope}
				}
				got := c.with(t).listText(f, tt.order, 4, tt.asOf)
				if !slices.Equal(got.ids, tt.want) && !(len(got.ids) == 0 && len(tt.want) == 0) {
					t.Fatalf("ids\n got %v\nwant %v", got.ids, tt.want)
				}
				if got.total != len(tt.want) {
					t.Errorf("totalCount %d, want %d", got.total, len(tt.want))
				}
				if wantPages := max(1, (len(tt.want)+3)/4); got.pages != wantPages {
					t.Errorf("pages %d, want %d", got.pages, wantPages)
				}
			})
		}
	}
}

// TestRecordsTextFilterBadInputNamesTheField: a text the filter cannot
// search is BAD_USER_INPUT naming filter.text.
func TestRecordsTextFilterBadInputNamesTheField(t *testing.T) {
	c := newClient(t)
	for _, text := range []string{"*", strings.Repeat("x", membrane.MaxQueryBytes+1)} {
		errs := c.Fail("BAD_USER_INPUT", `query($f: RecordFilter) { records(filter: $f) { totalCount } }`,
			map[string]any{"f": map[string]any{"text": text}})
		if f := fmt.Sprint(errs[0].Extensions["fields"]); !strings.Contains(f, "filter.text") {
			t.Errorf("%.10q: fields %s", text, f)
		}
	}
}

// TestRecordsTextFilterGating: the text filter only matches records the
// caller sees in full, in its scopes: a record redacted for it (one level
// above its ceiling) is listed without a text filter but never matched by
// its text, as retrieve never matches it.
func TestRecordsTextFilterGating(t *testing.T) {
	in, out := neo4jtest.Scope(t), neo4jtest.Scope(t)
	low := reader("low", membrane.SensitivityLow, in)
	c := newClient(t, low)
	w := word()
	m := newRetrMatrix(t, c, in, out, w)
	lc := c.as(low.Actor)
	text := lc.listText(map[string]any{"text": w}, nil, 100, nil)
	wantText := []string{"below/in", "below/unscoped"}
	if got := m.named(text.ids); !slices.Equal(got, wantText) || len(text.ids) != 2 || text.total != 2 {
		t.Fatalf("text filter: %v (total %d), want %v", got, text.total, wantText)
	}
	// Without the text, the medium records are listed (redacted): the
	// gate above is the text's, not the listing's.
	all := lc.listText(map[string]any{"scopes": []any{in, ""}}, nil, 100, nil)
	if got := m.named(all.ids); !slices.Contains(got, "at/in") || !slices.Contains(got, "at/unscoped") {
		t.Fatalf("listing without text: %v", got)
	}
	if got := m.named(hitIDs(lc.retrieve(map[string]any{"query": w, "limit": 20}).Retrieve.Hits)); !slices.Equal(got, wantText) {
		t.Errorf("retrieve: %v, want the same as the text filter", got)
	}
}

// TestSearchBadInput is the bad-input battery over GraphQL for every text
// search (retrieve, retrieveGraph's roots, records' text filter): each
// query gives exactly the fixtures it names (an empty set for none) or
// BAD_USER_INPUT, never INTERNAL, and Lucene syntax never changes the
// search's shape: operators, fields, wildcards, fuzziness, ranges and
// phrases are plain words, matched as any of the words.
func TestSearchBadInput(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := newClient(t)
	a, b := word(), word()
	pre, fuzzy, wild, rng := word(), word(), word(), word()
	now := time.Now().UTC()
	fixtures := map[string]string{
		"a":     a,
		"b":     b,
		"pre":   pre + "xyz",
		"fuzzy": fuzzy + "q",
		"wild":  wild + "c",
		"range": rng + "b",
		"stop":  "the and of",
	}
	names := map[string]string{}
	var recs []*membrane.Record
	for n, text := range fixtures {
		r := factRecord(t, scope, text, now)
		names[r.ID] = n
		recs = append(recs, r)
	}
	stored(t, c, recs...)

	manyTerms := []string{a}
	for i := 0; len(strings.Join(manyTerms, " ")) < membrane.MaxQueryBytes-16; i++ {
		manyTerms = append(manyTerms, fmt.Sprintf("q%d", i))
	}
	const bad = "BAD"
	tests := []struct {
		name string
		// query is the JSON text of the query string, so that it can hold
		// what a Go string cannot (a lone surrogate).
		query string
		want  []string // fixture names, or [bad]
	}{
		{"only stop words", `"the and of"`, nil},
		{"only punctuation", `"?!.,;:"`, []string{bad}},
		{"AND", js(a + " AND " + b), []string{"a", "b"}},
		{"OR", js(a + " OR " + b), []string{"a", "b"}},
		{"NOT", js(a + " NOT " + b), []string{"a", "b"}},
		{"&& and ||", js(a + " && " + b + " || x"), []string{"a", "b"}},
		{"field", js("title:" + a), []string{"a"}},
		{"field of every record", js("*:*"), []string{bad}},
		{"star", js("*"), []string{bad}},
		{"question mark", js("?"), []string{bad}},
		{"tilde", js("~"), []string{bad}},
		{"quote", js(`"`), []string{bad}},
		{"backslash", js(`\`), []string{bad}},
		{"parenthesis", js("("), []string{bad}},
		{"operators", js("+-!^{}"), []string{bad}},
		{"prefix wildcard", js(pre + "*"), nil},
		{"single-character wildcard", js(wild + "?"), nil},
		{"fuzzy", js(fuzzy + "z~"), nil},
		{"fuzzy with distance", js(fuzzy + "z~2"), nil},
		{"inclusive range", js("[" + rng + "a TO " + rng + "c]"), nil},
		{"exclusive range", js("{" + rng + "a TO " + rng + "c}"), nil},
		{"required and prohibited", js("+" + a + " -" + b), []string{"a", "b"}},
		{"bang", js("!" + b + " " + a), []string{"a", "b"}},
		{"boost", js(a + "^9 " + b), []string{"a", "b"}},
		{"phrase", js(`"` + a + " " + b + `"`), []string{"a", "b"}},
		{"unbalanced", js("(" + a + ` \`), []string{"a"}},
		{"escapes", js(`\` + a + `\:`), []string{"a"}},
		{"100 KB", js(strings.Repeat(a+" ", 100<<10/(len(a)+1))), []string{bad}},
		{"lone high surrogate", `"` + a + `\ud800"`, []string{"a"}},
		{"lone low surrogate alone", `"\udc00"`, []string{bad}},
		{"NUL between words", js(a + "\x00" + b), []string{"a", "b"}},
		{"NUL alone", js("\x00"), []string{bad}},
		{"very many terms", js(strings.Join(manyTerms, " ")), []string{"a"}},
	}
	run := func(t *testing.T, query string, fields func(json.RawMessage) (string, map[string]any), ids func(*testing.T, json.RawMessage) []string, want []string) {
		t.Helper()
		gql, vars := fields(json.RawMessage(query))
		resp := c.with(t).Raw(gql, vars)
		if len(want) == 1 && want[0] == bad {
			if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
				t.Fatalf("want %s, got %+v data %s", "BAD_USER_INPUT", resp.Errors, resp.Data)
			}
			return
		}
		if len(resp.Errors) > 0 {
			t.Fatalf("errors %+v", resp.Errors)
		}
		got := named(names, ids(t, resp.Data))
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	surfaces := []struct {
		name   string
		fields func(q json.RawMessage) (string, map[string]any)
		ids    func(t *testing.T, data json.RawMessage) []string
	}{
		{"retrieve", func(q json.RawMessage) (string, map[string]any) {
			return `query($in: RetrieveInput!) { retrieve(input: $in) { hits { record { id } } } }`,
				map[string]any{"in": map[string]any{"query": q, "scopes": []any{scope}, "limit": 20}}
		}, func(t *testing.T, data json.RawMessage) []string {
			var out struct {
				Retrieve struct {
					Hits []struct{ Record struct{ ID string } }
				}
			}
			decodeData(t, data, &out)
			var ids []string
			for _, h := range out.Retrieve.Hits {
				ids = append(ids, h.Record.ID)
			}
			return ids
		}},
		{"retrieveGraph", func(q json.RawMessage) (string, map[string]any) {
			return graphRootsQ, map[string]any{"in": map[string]any{"query": q, "scopes": []any{scope}, "rootLimit": 20, "maxHops": 0}}
		}, func(t *testing.T, data json.RawMessage) []string {
			var out struct {
				RetrieveGraph struct {
					Nodes []struct {
						Root   bool
						Record struct{ ID string }
					}
				}
			}
			decodeData(t, data, &out)
			var ids []string
			for _, n := range out.RetrieveGraph.Nodes {
				if n.Root {
					ids = append(ids, n.Record.ID)
				}
			}
			return ids
		}},
		{"records", func(q json.RawMessage) (string, map[string]any) {
			return `query($f: RecordFilter) { records(filter: $f, first: 100) { nodes { id } totalCount } }`,
				map[string]any{"f": map[string]any{"text": q, "scopes": []any{scope}}}
		}, func(t *testing.T, data json.RawMessage) []string {
			var out listed
			decodeData(t, data, &out)
			var ids []string
			for _, n := range out.Records.Nodes {
				ids = append(ids, n.ID)
			}
			if out.Records.TotalCount == nil || *out.Records.TotalCount != len(ids) {
				t.Errorf("totalCount %v for %d nodes", out.Records.TotalCount, len(ids))
			}
			return ids
		}},
	}
	for _, s := range surfaces {
		for _, tt := range tests {
			t.Run(s.name+"/"+tt.name, func(t *testing.T) {
				if tt.want == nil {
					tt.want = []string{}
				}
				run(t, tt.query, s.fields, s.ids, tt.want)
			})
		}
	}

	// With an embedder, retrieve and retrieveGraph also search the query's
	// embedding, whose nearest records are whatever they are: the text is
	// refused the same way, and nothing else may fail.
	cv := vectorClient(t, new(atomic.Bool))
	for _, s := range surfaces[:2] {
		for _, tt := range tests {
			t.Run(s.name+"+vector/"+tt.name, func(t *testing.T) {
				gql, vars := s.fields(json.RawMessage(tt.query))
				resp := cv.with(t).Raw(gql, vars)
				switch {
				case len(tt.want) == 1 && tt.want[0] == bad:
					if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
						t.Fatalf("want %s, got %+v", "BAD_USER_INPUT", resp.Errors)
					}
				case len(resp.Errors) > 0:
					t.Fatalf("errors %+v", resp.Errors)
				}
			})
		}
	}
}

// js is s as a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func decodeData(t *testing.T, data json.RawMessage, out any) {
	t.Helper()
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
