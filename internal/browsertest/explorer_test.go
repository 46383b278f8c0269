package browsertest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/membrane/membrane/internal/apptest"
	"github.com/membrane/membrane/internal/browsertest"
	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// chainLength is how many times the explorer test supersedes its first
// record: a lineage 100 deep, 101 records.
const chainLength = 100

// TestExplorer drives the lineage explorer in headless Chromium, on
// loopback only, as a reader whose key is one sensitivity level below one
// record: the page asks for the key; draws a supersede chain 100 deep
// with every edge; the asOf slider redraws the graph as it was; a
// supersede made through the API while the page is open appears without a
// reload; the audit timeline lists the open record's entries (its creation
// and its supersede, naming the successor), the live one included; a record above the key's ceiling shows as redacted, with none
// of its payload on the page. Every script and style came from the
// server, and no request left the machine (the harness fails the test
// otherwise). Screenshots of each step are kept.
func TestExplorer(t *testing.T) {
	adminKey, readerKey := "key-"+membrane.NewID(), "key-"+membrane.NewID()
	scope := neo4jtest.Scope(t)
	s := apptest.Start(t, apptest.Options{APIKey: adminKey, EncryptionKey: apptest.SealKey(),
		// Readers' keys have a HIGH ceiling (apptest): HYPER records come back redacted.
		Principals: []apptest.Principal{{Key: readerKey, Actor: "explorer-reader", Role: "reader", Scopes: []string{scope}}}})
	admin := func(query string, vars map[string]any) map[string]any {
		return graphQL(t, s.URL, adminKey, query, vars)
	}

	semantic := func(object string, sensitivity string) map[string]any {
		return map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": sensitivity, "payload": map[string]any{"semantic": map[string]any{
			"subject": "connection-pool", "predicate": "size", "object": object,
			"evidence": []map[string]any{{"sourceType": "test", "sourceId": object}}}}}
	}
	create := func(in map[string]any) string {
		d := admin(`mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": in})
		return d["createRecord"].(map[string]any)["id"].(string)
	}
	supersede := func(old, object string) string {
		d := admin(`mutation($old: ID!, $in: RecordInput!) { supersede(oldId: $old, newRecord: $in) { id } }`,
			map[string]any{"old": old, "in": semantic(object, "LOW")})
		return d["supersede"].(map[string]any)["id"].(string)
	}
	first := create(semantic("size-0", "LOW"))
	head := first
	var second string // first's successor, named by its audit timeline
	for i := 1; i <= chainLength; i++ {
		head = supersede(head, fmt.Sprintf("size-%d", i))
		if i == 1 {
			second = head
		}
	}

	b := browsertest.New(t)
	b.Navigate(s.URL + "/explorer/")
	// Without a key the first request is refused and the page asks for one.
	b.WaitVisible("#key-dialog[open] #key-input")
	b.Do("type the reader's key", chromedp.SendKeys(chromedp.CSS("#key-input"), readerKey))
	b.Click("#key-save")
	b.WaitFor("the search to list the reader's records", `document.querySelectorAll("#results li").length > 0`)

	// A lineage 100 deep, opened from its oldest record.
	open := func(id string, depth int, edges string) {
		t.Helper()
		_ = browsertest.Eval[bool](b, fmt.Sprintf(`(location.hash = %q, true)`,
			fmt.Sprintf("record=%s&depth=%d&edges=%s", id, depth, edges)))
	}
	waitGraph := func(what string, cond string) {
		t.Helper()
		b.WaitFor(what, `(() => { const g = document.getElementById("graph"); return g.dataset.state === "ready" && (`+cond+`); })()`)
	}
	open(first, chainLength, "lineage")
	waitGraph("the whole chain", fmt.Sprintf(`g.dataset.nodes === "%d" && g.dataset.edges === "%d"`, chainLength+1, chainLength))
	b.WaitText("#status", fmt.Sprintf("%d record(s)", chainLength+1))
	if got := browsertest.Eval[int](b, `membraneExplorer.cy().edges('[predicate = "SUPERSEDES"]').length`); got != chainLength {
		t.Fatalf("%d SUPERSEDES edges drawn, want %d", got, chainLength)
	}
	if got := browsertest.Eval[string](b, fmt.Sprintf(`membraneExplorer.cy().getElementById(%q).data("status")`, head)); got != "ACTIVE" {
		t.Fatalf("head drawn with status %q", got)
	}
	// The audit timeline of the record opened: its entries, oldest first,
	// read from auditLog: the creation, then the supersede naming its
	// successor.
	timeline := func(what string, id string, want ...string) {
		t.Helper()
		actions := make([]string, len(want))
		for i, a := range want {
			actions[i] = fmt.Sprintf("%q", a)
		}
		b.WaitFor(what, fmt.Sprintf(`membraneExplorer.state.selectedId === %q &&
			JSON.stringify([...document.querySelectorAll("#timeline li")].map((li) => li.dataset.action)) === %q`,
			id, "["+strings.Join(actions, ",")+"]"))
	}
	timeline("the first record's CREATE and SUPERSEDE", first, "CREATE", "SUPERSEDE")
	if got := b.Text(`#timeline li[data-action="SUPERSEDE"]`); !strings.Contains(got, "SUPERSEDED_BY "+second) {
		t.Fatalf("the supersede entry reads %q, want it to name the successor %s", got, second)
	}
	if got := b.Text(`#timeline li[data-action="CREATE"]`); !strings.Contains(got, "CREATE by ") {
		t.Fatalf("the create entry reads %q", got)
	}
	b.Screenshot("lineage-100")

	// The slider at its left end: the graph as it was when the first
	// record was created, before any supersede.
	b.WaitFor("the slider to be enabled", `!document.getElementById("asof").disabled`)
	setSlider := func(value string) {
		t.Helper()
		_ = browsertest.Eval[bool](b, `(() => { const s = document.getElementById("asof"); s.value = `+value+`;
			s.dispatchEvent(new Event("input")); s.dispatchEvent(new Event("change")); return true; })()`)
	}
	setSlider("0")
	waitGraph("the graph as of the first record's creation", `g.dataset.asOf !== "" && g.dataset.nodes === "1"`)
	if got := browsertest.Eval[string](b, fmt.Sprintf(`membraneExplorer.cy().getElementById(%q).data("status")`, first)); got != "ACTIVE" {
		t.Fatalf("first record as of its creation drawn with status %q, want ACTIVE", got)
	}
	b.Screenshot("as-of-creation")
	setSlider(`s.max`)
	waitGraph("the present again", fmt.Sprintf(`g.dataset.asOf === "" && g.dataset.nodes === "%d"`, chainLength+1))

	// Live: a supersede made elsewhere appears without a reload. The chain
	// is opened from its head, so that the successor is one hop away.
	open(head, chainLength, "lineage")
	waitGraph("the chain from its head", fmt.Sprintf(`g.dataset.nodes === "%d" && membraneExplorer.state.rootId === %q`, chainLength+1, head))
	waitGraph("the live feed", `g.dataset.live === "on"`)
	_ = browsertest.Eval[bool](b, `(window.notReloaded = true)`)
	newHead := supersede(head, "size-live")
	waitGraph("the live supersede", fmt.Sprintf(`g.dataset.nodes === "%d" && membraneExplorer.cy().getElementById(%q).length === 1`, chainLength+2, newHead))
	if !browsertest.Eval[bool](b, `window.notReloaded === true`) {
		t.Fatal("the page reloaded")
	}
	// The open record's timeline follows: its supersede, live too.
	timeline("the head's live SUPERSEDE entry", head, "CREATE", "SUPERSEDE")
	b.WaitText(`#timeline li[data-action="SUPERSEDE"]`, "SUPERSEDED_BY "+newHead)
	b.Screenshot("live-supersede")

	// Redacted: a HYPER record related to a LOW one, seen by a key whose
	// ceiling is HIGH.
	secret := "hyper-secret-" + membrane.NewID()
	hyper := create(semantic(secret, "HYPER"))
	low := create(semantic("size-low", "LOW"))
	admin(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: MENTIONS, targetId: $t) { predicate } }`,
		map[string]any{"s": low, "t": hyper})
	open(low, 1, "all")
	waitGraph("the redacted neighbour", `g.dataset.nodes === "2" && g.dataset.redacted === "1"`)
	if !browsertest.Eval[bool](b, fmt.Sprintf(`membraneExplorer.cy().getElementById(%q).hasClass("redacted")`, hyper)) {
		t.Fatal("the HYPER record is not drawn as redacted")
	}
	if got := browsertest.Eval[string](b, fmt.Sprintf(`membraneExplorer.cy().getElementById(%q).data("label")`, hyper)); !strings.Contains(got, "REDACTED") {
		t.Fatalf("redacted node labelled %q", got)
	}
	b.WaitText("#legend", "REDACTED")
	_ = browsertest.Eval[bool](b, fmt.Sprintf(`(membraneExplorer.cy().getElementById(%q).emit("tap"), true)`, hyper))
	b.WaitText("#details", "REDACTED")
	if page := browsertest.Eval[string](b, `document.documentElement.outerHTML + JSON.stringify(membraneExplorer.cy().json())`); strings.Contains(page, secret) {
		t.Fatal("the redacted record's payload is on the page")
	}
	b.Screenshot("redacted")

	// Everything the page loaded came from the server.
	requests := b.Requests()
	for _, asset := range []string{"/explorer/", "/assets/explorer/explorer.js", "/assets/explorer/explorer.css", "/assets/vendor/cytoscape-3.34.4/cytoscape.min.js"} {
		if !slices.Contains(requests, s.URL+asset) {
			t.Errorf("%s not loaded from the server; requests:\n%s", asset, strings.Join(requests, "\n"))
		}
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, s.URL+"/") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
			t.Errorf("request to another origin: %s", u)
		}
	}
}

// graphQL runs an operation as the key's principal and returns its data,
// failing the test on any error.
func graphQL(t *testing.T, base, key, query string, vars map[string]any) map[string]any {
	t.Helper()
	r := (&gqltest.Client{T: t, URL: base, Key: key}).Raw(query, vars)
	var data map[string]any
	if err := json.Unmarshal(r.Data, &data); err != nil || r.Status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("%s: status %d, errors %+v, decode %v", query, r.Status, r.Errors, err)
	}
	return data
}
