package graph_test

// Helpers of the leak scan (leakscan_test.go): selection sets generated
// from the schema, a scanner of whole JSON documents, subscriptions over
// both transports, and the servers the scan restarts.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/membrane/membrane/graph"
	"github.com/membrane/membrane/internal/feed"
	"github.com/membrane/membrane/internal/gqltest"
	membranehttp "github.com/membrane/membrane/internal/http"
	"github.com/membrane/membrane/internal/jobs"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
)

// selGen writes selection sets from the schema, so that a field added to
// the schema is selected (and scanned) without anyone editing the scan.
type selGen struct {
	s       *ast.Schema
	reaches map[string]bool // type -> a field of it (transitively) returns Record
}

func newSelGen() *selGen {
	return &selGen{s: graph.NewExecutableSchema(graph.Config{}).Schema(), reaches: map[string]bool{}}
}

// reachesRecord reports whether a selection of type name can contain a
// Record (so that the Record nesting depth bounds it).
func (g *selGen) reachesRecord(name string, seen map[string]bool) bool {
	if name == "Record" {
		return true
	}
	if v, ok := g.reaches[name]; ok {
		return v
	}
	if seen[name] {
		return false
	}
	seen[name] = true
	def := g.s.Types[name]
	out := false
	if def != nil {
		for _, f := range def.Fields {
			if g.reachesRecord(f.Type.Name(), seen) {
				out = true
			}
		}
		for _, p := range g.s.GetPossibleTypes(def) {
			if p.Name != name && g.reachesRecord(p.Name, seen) {
				out = true
			}
		}
	}
	g.reaches[name] = out
	return out
}

// fragments returns the fragments R0..R<depth> on Record: R<n> selects
// every field of a record, the records it leads to (through any wrapper:
// connections, edges, lineage nodes...) selected as R<n-1>; R0 selects what
// holds no other record.
func (g *selGen) fragments(depth int) string {
	var b strings.Builder
	for d := 0; d <= depth; d++ {
		fmt.Fprintf(&b, "\nfragment R%d on Record %s", d, g.sel("Record", d, true))
	}
	return b.String()
}

// sel returns the selection set of type name (empty for a leaf, or for a
// type that holds only records past the last level), a record in it
// selected as R<depth>; top is true for the Record a fragment is about.
// Only a record consumes a level: wrapper types pass depth on unchanged, so
// that of("RecordConnection", 1) selects its records as R1.
func (g *selGen) sel(name string, depth int, top bool) string {
	def := g.s.Types[name]
	switch {
	case def == nil || def.Kind == ast.Scalar || def.Kind == ast.Enum:
		return ""
	case name == "Record" && !top:
		if depth < 0 {
			return ""
		}
		return fmt.Sprintf("{ ...R%d }", depth)
	case name == "Record":
		depth-- // the records a record leads to are one level down
	case def.Kind == ast.Union || def.Kind == ast.Interface:
		parts := []string{"__typename"}
		for _, p := range g.s.GetPossibleTypes(def) {
			if sub := g.sel(p.Name, depth, false); sub != "" {
				parts = append(parts, fmt.Sprintf("... on %s %s", p.Name, sub))
			}
		}
		return "{ " + strings.Join(parts, " ") + " }"
	}
	var parts []string
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") || requiredArgs(f) {
			continue
		}
		t := f.Type.Name()
		sub := g.sel(t, depth, false)
		if sub == "" && g.s.Types[t] != nil && g.s.Types[t].Kind != ast.Scalar && g.s.Types[t].Kind != ast.Enum {
			continue // only records past the last level
		}
		parts = append(parts, f.Name+" "+sub)
	}
	if len(parts) == 0 {
		return ""
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

func requiredArgs(f *ast.FieldDefinition) bool {
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return true
		}
	}
	return false
}

// of returns the selection of a root field's type, its records selected
// as R<depth> (fragments R0..R<depth> must be in the document).
func (g *selGen) of(typeName string, depth int) string { return g.sel(typeName, depth, false) }

// holdsRecords reports whether a selection of type name can hold a record.
func (g *selGen) holdsRecords(typeName string) bool {
	return g.reachesRecord(typeName, map[string]bool{})
}

// needle is a string that must not reach a caller unless it may see what
// it belongs to.
type needle struct {
	text  string // lower case
	owner string // key of the item (leakItem) it belongs to
	kind  string // id, text, name
}

// leakItem is a record or entity of the fixture, with what a caller may
// see of it decided by its sensitivity and scope.
type leakItem struct {
	key   string // a readable name: "A/HYPER fact", "entity E1"...
	id    string
	scope string
	level membrane.Sensitivity
}

// leak is one needle found where its caller must not find it.
type leak struct {
	phase, caller, op, path, kind, item string
}

// class is what the allow-list matches: the path with indices dropped.
func (l leak) class() string {
	return fmt.Sprintf("%s %s [%s]", l.op, l.normPath(), l.kind)
}

// normPath is the leak's path with indices as [] and aliases as a*.
func (l leak) normPath() string {
	return aliasRE.ReplaceAllString(indexRE.ReplaceAllString(l.path, "[]"), ".a*.")
}

var (
	indexRE = regexp.MustCompile(`\[\d+\]`)
	aliasRE = regexp.MustCompile(`\.a\d+\.`)
)

// scanJSON walks v (a decoded JSON document) and calls found for every
// string holding one of the needles, with its JSON path.
func scanJSON(v any, path string, needles []needle, found func(path string, n needle)) {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		for _, k := range keys {
			// A key may hold text too (JSON objects of payloads).
			scanString(k, path+".<key>", needles, found)
			scanJSON(v[k], path+"."+k, needles, found)
		}
	case []any:
		for i, e := range v {
			scanJSON(e, fmt.Sprintf("%s[%d]", path, i), needles, found)
		}
	case string:
		scanString(v, path, needles, found)
	}
}

func scanString(s, path string, needles []needle, found func(path string, n needle)) {
	low := strings.ToLower(s)
	for _, n := range needles {
		if strings.Contains(low, n.text) {
			found(path, n)
		}
	}
}

// scanCaller is one restricted caller of the scan.
type scanCaller struct {
	name    string
	actor   string
	key     string
	ceiling membrane.Sensitivity
	scopes  []string          // nil: every scope
	header  map[string]string // narrowing headers
	writer  bool
	role    membrane.Role
}

// sees returns what the caller sees of an item: full, redacted or none.
func (c scanCaller) sees(it leakItem) string {
	if it.scope != "" && c.scopes != nil && !containsStr(c.scopes, it.scope) {
		return "none"
	}
	switch d := it.level.Level() - c.ceiling.Level(); {
	case d <= 0:
		return "full"
	case d == 1:
		return "redacted"
	default:
		return "none"
	}
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// post sends one GraphQL request as the caller and returns the whole
// decoded body (data, errors, extensions) and its raw text.
func (c scanCaller) post(t *testing.T, url, query string, vars map[string]any) (map[string]any, []byte) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	_, b := c.do(t, req)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: decode %q: %v", c.name, b, err)
	}
	return out, b
}

// authorize sets the caller's key and headers on req.
func (c scanCaller) authorize(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+c.key)
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
}

// get downloads url as the caller and returns the status and the body.
func (c scanCaller) get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.do(t, req)
}

// do sends req as the caller and returns the status and the body.
func (c scanCaller) do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	c.authorize(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// subscribe replays a subscription from after over SSE or WebSocket and
// returns every event (whole JSON payloads) up to the first one whose
// record id is until, failing after a generous protocol timeout.
func (c scanCaller) subscribe(t *testing.T, url, transport, query string, vars map[string]any, until string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	events, err := c.stream(ctx, url, transport, query, vars, func(ev map[string]any) bool { return eventOf(ev, until) })
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// eventOf reports whether ev is an event of the record id.
func eventOf(ev map[string]any, id string) bool {
	b, _ := json.Marshal(ev)
	return bytes.Contains(b, []byte(`"recordId":"`+id+`"`))
}

// stream runs a subscription over SSE or WebSocket and returns every
// event (whole JSON payloads) up to the first for which last is true, or
// an error (it may run on a goroutine of its own).
func (c scanCaller) stream(ctx context.Context, url, transport, query string, vars map[string]any, last func(map[string]any) bool) ([]map[string]any, error) {
	var events []map[string]any
	done := func(ev map[string]any) bool {
		events = append(events, ev)
		return last(ev)
	}
	switch transport {
	case "sse":
		req := gqltest.SSERequest(ctx, url, query, vars)
		c.authorize(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return events, fmt.Errorf("%s sse: %w", c.name, err)
		}
		defer resp.Body.Close()
		var stopped bool
		var decodeErr error
		readErr := gqltest.ScanSSE(resp.Body, func(data []byte) bool {
			var ev map[string]any
			if decodeErr = json.Unmarshal(data, &ev); decodeErr != nil {
				return false
			}
			stopped = done(ev)
			return !stopped
		})
		switch {
		case decodeErr != nil:
			return events, fmt.Errorf("%s sse: %w", c.name, decodeErr)
		case stopped:
			return events, nil
		}
		return events, fmt.Errorf("%s sse: stream ended before its last event (%v); events %d", c.name, readErr, len(events))
	case "ws":
		conn, _, err := websocket.Dial(ctx, gqltest.WebSocketURL(url),
			&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			return events, fmt.Errorf("%s ws: %w", c.name, err)
		}
		defer conn.CloseNow()
		conn.SetReadLimit(64 << 20)
		init := map[string]any{"Authorization": "Bearer " + c.key}
		for k, v := range c.header {
			init[k] = v
		}
		if err := wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": init}); err != nil {
			return events, err
		}
		if err := wsjson.Write(ctx, conn, map[string]any{"id": "1", "type": "subscribe",
			"payload": map[string]any{"query": query, "variables": vars}}); err != nil {
			return events, err
		}
		for {
			var m map[string]any
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				return events, fmt.Errorf("%s ws: %w after %d events", c.name, err, len(events))
			}
			switch m["type"] {
			case "next":
				p, _ := m["payload"].(map[string]any)
				if done(p) {
					return events, nil
				}
			case "error", "complete":
				return events, fmt.Errorf("%s ws: %v", c.name, m)
			}
		}
	}
	return events, fmt.Errorf("unknown transport %q", transport)
}

// scanServer is one server process of the scan over its own store (its
// own driver, as a restarted process has), with the change feed and jobs.
type scanServer struct {
	url string
	db  *neo4j.DB
	hub *feed.Hub
}

// openScanStore opens a store of its own with keys (the first active) and
// runs the start-up migrations, as a (re)starting server does. It returns
// the migration's error rather than failing: a start-up that fails is a
// finding of the scan.
func openScanStore(t *testing.T, keys ...membrane.SealKey) (*neo4j.DB, error) {
	t.Helper()
	s, err := membrane.NewSealer(membrane.SensitivityHigh, keys, keys[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	db, err := neo4j.Open(ctx, neo4j.Config{URI: os.Getenv("NEO4J_URI"), User: os.Getenv("NEO4J_USER"),
		Password: os.Getenv("NEO4J_PASSWORD"), Database: "neo4j", MaxPoolSize: 100 /* the server's default */, TxTimeout: time.Minute, Sealer: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(context.Background()) })
	return db, db.Start(ctx, true)
}

// startScanServer serves db with the keyring ring and no query limits (the
// scan selects everything; limits are tested elsewhere), jobs restricted
// to scopes.
func startScanServer(t *testing.T, db *neo4j.DB, ring []membrane.APIKey, scopes []string) scanServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner, err := jobs.New(db, membrane.DefaultPolicy(), jobs.Config{Timeout: time.Minute, LeaseTTL: time.Minute,
		Holder: "leakscan-" + membrane.NewID(), Scopes: scopes, Consolidation: membrane.DefaultConsolidationOptions()}, log, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = runner.Stop(context.Background()) })
	hub := feed.NewHub(db, feed.Config{Interval: 20 * time.Millisecond, Holder: t.Name()}, nil)
	stop := hub.Go()
	t.Cleanup(func() {
		hub.Close()
		stop()
	})
	w := gqltest.NewWiring(db, log)
	w.Stores.Deletes, w.Stores.Metrics, w.Stores.Jobs = db, db, runner
	w.Stores.Feed, w.Feed = db, hub
	r := w.Resolver()
	opts := membranehttp.DefaultHandlerOptions()
	none := graph.QueryLimits{}
	opts.Limits = map[membrane.Role]graph.QueryLimits{membrane.RoleAdmin: none, membrane.RoleWriter: none, membrane.RoleReader: none}
	opts.ParserTokenLimit = 0
	srv := httptest.NewServer(membranehttp.NewHandler(r, db, membrane.NewKeyring(ring), log, opts))
	t.Cleanup(srv.Close)
	return scanServer{url: srv.URL, db: db, hub: hub}
}

// follower is one live subscription of the leak scan, running on a
// goroutine of its own until stopped.
type follower struct {
	caller scanCaller
	op     string
	cancel context.CancelFunc
	done   chan struct{} // closed when the stream has ended
	more   chan struct{} // poked after every event

	mu     sync.Mutex
	events []map[string]any
	err    error
}

// follow starts query (with vars) as c over transport on a goroutine.
func follow(ctx context.Context, c scanCaller, op, url, transport, query string, vars map[string]any) *follower {
	ctx, cancel := context.WithCancel(ctx)
	f := &follower{caller: c, op: op, cancel: cancel, done: make(chan struct{}), more: make(chan struct{}, 1)}
	go func() {
		defer close(f.done)
		_, err := c.stream(ctx, url, transport, query, vars, func(ev map[string]any) bool {
			f.mu.Lock()
			f.events = append(f.events, ev)
			f.mu.Unlock()
			select {
			case f.more <- struct{}{}:
			default:
			}
			return false
		})
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
	}()
	return f
}

// await waits until the follower has received an event of record id, and
// fails when its stream ends first or after a generous timeout.
func (f *follower) await(t *testing.T, id string) {
	t.Helper()
	timeout := time.After(3 * time.Minute)
	for {
		f.mu.Lock()
		seen := slices.ContainsFunc(f.events, func(ev map[string]any) bool { return eventOf(ev, id) })
		err := f.err
		f.mu.Unlock()
		if seen {
			return
		}
		select {
		case <-f.more:
		case <-f.done:
			if err == nil {
				f.mu.Lock()
				err = f.err
				f.mu.Unlock()
			}
			t.Fatalf("%s as %s: the stream ended before record %s: %v", f.op, f.caller.name, id, err)
		case <-timeout:
			t.Fatalf("%s as %s: no event of record %s", f.op, f.caller.name, id)
		}
	}
}

// stop ends the stream and returns every event it received.
func (f *follower) stop() []map[string]any {
	f.cancel()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events
}
