package graph_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	neturl "net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// documentedLeaks lists what the scan finds that is documented behaviour
// rather than a leak, each with the number of issue 11's finding it
// belongs to. A leak no entry matches fails the scan.
//
// An entry matches a leak whose operation starts with op, whose JSON path
// (indices as [], aliases as a*) ends with path, and whose kind starts with
// kind.
var documentedLeaks = []knownLeak{
	// 5: the change cursor is a global position: it moves on a write the
	// caller cannot see. Documented as such, with the reason
	// (docs/security.md, "Change-feed cursors").
	{5, "changeCursor", "", "cursor"},
}

type knownLeak struct {
	finding        int
	op, path, kind string
}

func (k knownLeak) matches(l leak) bool {
	return strings.HasPrefix(l.op, k.op) && strings.HasSuffix(l.normPath(), k.path) && strings.HasPrefix(l.kind, k.kind)
}

// TestLeakScan writes a fixture of records at every sensitivity in two
// scopes, entities, relations and revisions of every kind as a HYPER
// admin, then, for each restricted caller, calls every read path selecting
// every field of the schema and scans the whole JSON of every response for
// the ids and text of what the caller may not see (and for the content of
// what it sees only redacted), the graph downloads included, and both
// subscriptions twice: followed live while the fixture is written (each
// event gated in memory as it is published) and replayed from a cursor
// (gated by the store). It scans
// again after a restart (a new store and server over the same database,
// start-up migrations included) and after a key rotation (reseal, then a
// server without the old key), and scans the database at rest (properties
// and full-text indexes) for the plaintext of sealed records.
func TestLeakScan(t *testing.T) {
	s := newLeakScan(t)
	// Subscribers following the feed while the fixture is written: its
	// events reach them live.
	endLive := s.followLive(t)
	s.writeFixture(t)
	live := endLive()

	var mu sync.Mutex
	var found []leak
	report := func(l leak) {
		mu.Lock()
		defer mu.Unlock()
		found = append(found, l)
	}
	phases := []struct {
		name  string
		start func(t *testing.T) error
	}{
		{"initial", func(t *testing.T) error { return nil }},
		{"restart", s.restart},
		{"rotation", s.rotate},
	}
	for i, ph := range phases {
		t.Run(ph.name, func(t *testing.T) {
			if err := ph.start(t); err != nil {
				report(leak{phase: ph.name, caller: "server", op: "start-up", path: err.Error(), kind: "error"})
			}
			s.probes(t, ph.name, i, report)
			if i == 0 {
				for _, f := range live {
					for _, ev := range f.events {
						s.scanDoc(ph.name, f.caller, f.op, ev, report)
						if ev["errors"] != nil {
							t.Errorf("%s as %s: an event with errors: %v", f.op, f.caller.name, ev)
						}
					}
				}
			}
			sentinel := s.create(t, s.srv.url, s.scopeA, membrane.SensitivityPublic, "sentinel "+ph.name)
			// The text probes find the sentinel (their positive control).
			if err := s.srv.db.AwaitSearchIndexes(t.Context()); err != nil {
				t.Fatal(err)
			}
			callers := s.callers
			if i > 0 {
				// After the restart and the rotation, the callers that
				// cover every kind of visibility (below, redacted, hidden,
				// out of scope, a writer): the full matrix takes minutes
				// on a shared machine.
				callers = []scanCaller{s.callers[1], s.callers[3], s.callers[4]}
			}
			t.Run("callers", func(t *testing.T) {
				for _, c := range callers {
					// One caller at a time: the machine and the database are
					// shared, and a starved connection pool fails requests.
					t.Run(c.name, func(t *testing.T) {
						s.scanAs(t, ph.name, c, sentinel, report)
					})
				}
			})
			s.scanAtRest(t, ph.name, report)
			mu.Lock()
			for _, l := range found {
				if l.phase == ph.name {
					t.Logf("found: %s: %s at %s", l.class(), l.item, l.path)
				}
			}
			mu.Unlock()
		})
	}

	// The report: every leak class once, with a count and an example; a
	// class is reported by the allow-list entry it matches, or in full.
	classes := map[string][]leak{}
	entry := map[string]*knownLeak{}
	for _, l := range found {
		k := l.class()
		for i := range documentedLeaks {
			if a := &documentedLeaks[i]; a.matches(l) {
				k = fmt.Sprintf("finding %d: %s …%s [%s*]", a.finding, a.op, a.path, a.kind)
				entry[k] = a
				break
			}
		}
		classes[k] = append(classes[k], l)
	}
	keys := slices.Sorted(maps.Keys(classes))
	for _, k := range keys {
		ls := classes[k]
		e := ls[0]
		msg := fmt.Sprintf("%s: %d occurrence(s); e.g. phase %s, caller %s, %s at %s", k, len(ls), e.phase, e.caller, e.item, e.path)
		if entry[k] == nil {
			t.Errorf("NEW LEAK %s", msg)
		} else {
			t.Logf("documented, %s", msg)
		}
	}
	for _, a := range documentedLeaks {
		k := fmt.Sprintf("finding %d: %s …%s [%s*]", a.finding, a.op, a.path, a.kind)
		if classes[k] == nil {
			// Every entry must be observed: one the scan no longer sees is
			// either fixed (delete it) or no longer probed (a hole).
			t.Errorf("allow-listed leak not found any more (finding %d: %s …%s [%s]): delete its entry, or probe it again", a.finding, a.op, a.path, a.kind)
		}
	}
}

// leakScan is the scan's fixture and servers.
type leakScan struct {
	scopeA, scopeB, scopeC string
	tag                    string
	oldKey, newKey         membrane.SealKey
	ring                   []membrane.APIKey
	admin                  scanCaller
	writer                 scanCaller
	callers                []scanCaller
	srv                    scanServer // the server of the current phase
	gen                    *selGen

	mu      sync.Mutex
	items   map[string]leakItem
	needles []needle
	ents    []string        // keys of the entities the probes name, one a phase
	hidden  []string        // keys of records no caller sees (for the id oracle)
	gone    map[string]bool // keys of records deleted (NOT_FOUND to every caller)
	lineage map[string]bool // keys of the records in lineage (revisions)
	sealed  []sealedFact
	since   time.Time
	cursor0 string
}

// sealedFact is what the unkeyed factKey digest of a sealed fact hashes.
type sealedFact struct{ key, scope, subject, predicate, object string }

func newLeakScan(t *testing.T) *leakScan {
	neo4jtest.DB(t) // the schema, and a clear failure without NEO4J_URI
	suffix := membrane.NewID()
	s := &leakScan{scopeA: neo4jtest.Scope(t), scopeB: neo4jtest.Scope(t), scopeC: neo4jtest.Scope(t),
		tag:    "leakscan-" + suffix,
		oldKey: membrane.SealKey{ID: "scan-old-" + suffix, Key: bytes.Repeat([]byte{21}, 32)},
		newKey: membrane.SealKey{ID: "scan-new-" + suffix, Key: bytes.Repeat([]byte{22}, 32)},
		items:  map[string]leakItem{}, gen: newSelGen(), since: time.Now().UTC()}
	principal := func(name string, role membrane.Role, ceiling membrane.Sensitivity, scopes []string, header map[string]string) scanCaller {
		p := membrane.Principal{Actor: name + "-" + suffix, Role: role, MaxSensitivity: ceiling, Scopes: scopes}
		secret := "key-" + membrane.NewID()
		k, err := membrane.NewAPIKey(membrane.HashKey(secret), p)
		if err != nil {
			t.Fatal(err)
		}
		s.ring = append(s.ring, k)
		c := scanCaller{name: name, actor: p.Actor, key: secret, ceiling: ceiling, scopes: scopes, header: header, writer: role != membrane.RoleReader, role: role}
		if header != nil {
			c.ceiling = membrane.Sensitivity(strings.ToLower(header["X-Membrane-Max-Sensitivity"]))
			c.scopes = strings.Split(header["X-Membrane-Scopes"], ",")
		}
		if scopes != nil && scopes[0] == membrane.AllScopes && header == nil {
			c.scopes = nil
		}
		return c
	}
	ab := []string{s.scopeA, s.scopeB}
	s.admin = principal("admin", membrane.RoleAdmin, membrane.SensitivityHyper, []string{membrane.AllScopes}, nil)
	s.writer = principal("writer-low", membrane.RoleWriter, membrane.SensitivityLow, []string{s.scopeA}, nil)
	s.callers = []scanCaller{
		principal("reader-public", membrane.RoleReader, membrane.SensitivityPublic, ab, nil),
		principal("reader-low", membrane.RoleReader, membrane.SensitivityLow, ab, nil),
		principal("reader-medium", membrane.RoleReader, membrane.SensitivityMedium, ab, nil),
		principal("reader-high", membrane.RoleReader, membrane.SensitivityHigh, ab, nil),
		s.writer,
		principal("reader-medium-scoped", membrane.RoleReader, membrane.SensitivityMedium, []string{s.scopeA}, nil),
		principal("admin-narrowed", membrane.RoleAdmin, membrane.SensitivityHyper, []string{membrane.AllScopes},
			map[string]string{"X-Membrane-Max-Sensitivity": "LOW", "X-Membrane-Scopes": s.scopeA}),
	}

	// Records and entities sealed under a key of the scan's own, so that
	// its reseal touches nothing of other tests and the rotation phase
	// covers resealed entities (their blind names rewritten); the suite's
	// key opens other tests' records. Another test process starting
	// meanwhile skips and counts what it cannot open (finding 3).
	db, err := openScanStore(t, s.oldKey, neo4jtest.TestSealKey)
	if err != nil {
		t.Fatal(err)
	}
	s.srv = startScanServer(t, db, s.ring, []string{s.scopeA, s.scopeB, s.scopeC})
	t.Cleanup(func() { s.cleanup(t, db) })
	return s
}

// cleanup deletes everything the scan wrote: nothing sealed under its keys
// may stay in the shared database.
func (s *leakScan) cleanup(t *testing.T, db interface {
	DeleteScope(context.Context, string) error
}) {
	ctx := context.Background()
	for _, sc := range []string{s.scopeA, s.scopeB, s.scopeC} {
		if err := db.DeleteScope(ctx, sc); err != nil {
			t.Error(err)
		}
	}
	var ids []string
	for _, it := range s.items {
		if it.scope == "" {
			ids = append(ids, it.id)
		}
	}
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Error(err)
		return
	}
	defer d.Close(ctx)
	if _, err := driver.ExecuteQuery(ctx, d, `MATCH (m:Memory) WHERE m.id IN $ids OPTIONAL MATCH (m)-[:HAS_AUDIT]->(a) DETACH DELETE m, a`,
		map[string]any{"ids": ids}, driver.EagerResultTransformer); err != nil {
		t.Error(err)
	}
}

// word returns a distinctive word no analysis changes (lower case letters,
// ending in x, which no stemmer strips), registered as text of owner.
func (s *leakScan) word(owner, kind string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	w := []byte("zq")
	for _, c := range b {
		w = append(w, "bcdfghjklmnprstv"[c%16])
	}
	w = append(w, 'x')
	s.mu.Lock()
	defer s.mu.Unlock()
	s.needles = append(s.needles, needle{text: string(w), owner: owner, kind: kind})
	return string(w)
}

func (s *leakScan) addItem(key, id, scope string, level membrane.Sensitivity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[key] = leakItem{key: key, id: id, scope: scope, level: level}
	s.needles = append(s.needles, needle{text: strings.ToLower(id), owner: key, kind: "id"})
}

// factIn returns the input of a fact whose text is all distinctive words
// of key.
func (s *leakScan) factIn(key, scope string, level membrane.Sensitivity) map[string]any {
	subj, obj, ev, ref := s.word(key, "text"), s.word(key, "text"), s.word(key, "text"), s.word(key, "text")
	if level.Level() >= membrane.SensitivityHigh.Level() {
		s.mu.Lock()
		s.sealed = append(s.sealed, sealedFact{key: key, scope: scope, subject: subj, predicate: "is", object: obj})
		s.mu.Unlock()
	}
	return map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": strings.ToUpper(string(level)), "tags": []any{s.tag},
		"lifecycle":  map[string]any{"deletionPolicy": "AUTO_PRUNE"},
		"provenance": map[string]any{"sources": []any{map[string]any{"kind": "ARTIFACT", "ref": "doc://" + ref}}},
		"payload": map[string]any{"semantic": map[string]any{"subject": subj, "predicate": "is", "object": obj,
			"evidence": []any{map[string]any{"sourceType": "doc", "sourceId": ev}}}}}
}

// as sends a mutation or query as the admin and fails on errors.
func (s *leakScan) as(t *testing.T, c scanCaller, url, q string, vars map[string]any) map[string]any {
	t.Helper()
	out, raw := c.post(t, url, q, vars)
	if out["errors"] != nil {
		t.Fatalf("%s: %s", q, raw)
	}
	return out["data"].(map[string]any)
}

func (s *leakScan) create(t *testing.T, url, scope string, level membrane.Sensitivity, key string) string {
	t.Helper()
	d := s.as(t, s.admin, url, `mutation($in: RecordInput!) { createRecord(input: $in, actor: "seeder") { id } }`,
		map[string]any{"in": s.factIn(key, scope, level)})
	id := d["createRecord"].(map[string]any)["id"].(string)
	s.addItem(key, id, scope, level)
	return id
}

var scanLevels = []membrane.Sensitivity{membrane.SensitivityPublic, membrane.SensitivityLow, membrane.SensitivityMedium,
	membrane.SensitivityHigh, membrane.SensitivityHyper}

// writeFixture writes the records, entities, relations and revisions of
// every kind, as the HYPER admin.
func (s *leakScan) writeFixture(t *testing.T) {
	url := s.srv.url
	cur := s.as(t, s.admin, url, `{ changeCursor }`, nil)
	s.cursor0 = cur["changeCursor"].(string)
	id := map[string]string{}
	for _, sc := range []struct{ name, scope string }{{"A", s.scopeA}, {"B", s.scopeB}} {
		for _, l := range scanLevels {
			k := sc.name + "/" + string(l)
			id[k] = s.create(t, url, sc.scope, l, k)
		}
	}
	id["U/low"] = s.create(t, url, "", membrane.SensitivityLow, "U/low")
	id["U/high"] = s.create(t, url, "", membrane.SensitivityHigh, "U/high")
	hyper, public, low := membrane.SensitivityHyper, membrane.SensitivityPublic, membrane.SensitivityLow
	A := s.scopeA
	newRec := func(key string, level membrane.Sensitivity) map[string]any { return s.factIn(key, A, level) }
	revise := func(key string, level membrane.Sensitivity, q string, vars map[string]any) {
		vars["in"] = newRec(key, level)
		d := s.as(t, s.admin, url, q, vars)
		for _, v := range d {
			s.addItem(key, v.(map[string]any)["id"].(string), A, level)
		}
	}
	// supersede: a visible record superseded by a hidden one, and the reverse.
	id["sup-old"] = s.create(t, url, A, public, "sup-old")
	revise("sup-new", hyper, `mutation($o: ID!, $in: RecordInput!) { supersede(oldId: $o, newRecord: $in, rationale: "newer") { id } }`, map[string]any{"o": id["sup-old"]})
	id["sup2-old"] = s.create(t, url, A, hyper, "sup2-old")
	revise("sup2-new", low, `mutation($o: ID!, $in: RecordInput!) { supersede(oldId: $o, newRecord: $in, rationale: "newer") { id } }`, map[string]any{"o": id["sup2-old"]})
	// fork both ways.
	id["fork-src"] = s.create(t, url, A, hyper, "fork-src")
	revise("fork-new", public, `mutation($s: ID!, $in: RecordInput!) { fork(sourceId: $s, newRecord: $in, rationale: "variant") { id } }`, map[string]any{"s": id["fork-src"]})
	id["fork2-src"] = s.create(t, url, A, public, "fork2-src")
	revise("fork2-new", hyper, `mutation($s: ID!, $in: RecordInput!) { fork(sourceId: $s, newRecord: $in, rationale: "variant") { id } }`, map[string]any{"s": id["fork2-src"]})
	// merge of a hidden and a visible record into a visible one.
	id["merge-a"] = s.create(t, url, A, hyper, "merge-a")
	id["merge-b"] = s.create(t, url, A, low, "merge-b")
	revise("merged", low, `mutation($ids: [ID!]!, $in: RecordInput!) { merge(ids: $ids, mergedRecord: $in, rationale: "same") { id } }`,
		map[string]any{"ids": []any{id["merge-a"], id["merge-b"]}})
	// contest both ways, and by an external reference.
	id["contested"] = s.create(t, url, A, public, "contested")
	s.as(t, s.admin, url, `mutation($id: ID!, $r: String!) { contest(id: $id, contestingRef: $r, rationale: "disputed") { id } }`,
		map[string]any{"id": id["contested"], "r": id["A/hyper"]})
	s.as(t, s.admin, url, `mutation($id: ID!, $r: String!) { contest(id: $id, contestingRef: $r, rationale: "disputed") { id } }`,
		map[string]any{"id": id["A/hyper"], "r": id["A/low"]})
	s.as(t, s.admin, url, `mutation($id: ID!, $r: String!) { contest(id: $id, contestingRef: $r, rationale: "disputed") { id } }`,
		map[string]any{"id": id["B/high"], "r": "https://tickets/" + s.word("B/high", "text")})
	// relations of every non-lineage kind from visible to hidden records.
	rel := func(src, pred, dst string) {
		s.as(t, s.admin, url, fmt.Sprintf(`mutation($s: ID!, $d: ID!) { addRelation(sourceId: $s, predicate: %s, targetId: $d, rationale: "linked") { predicate } }`, pred),
			map[string]any{"s": src, "d": dst})
	}
	for i, pred := range []string{"SUPPORTS", "CONTRADICTS", "DEPENDS_ON", "USES", "MENTIONS", "ABOUT", "REFERENCES", "CAUSED_BY", "RELATED_TO"} {
		dst := []string{id["A/hyper"], id["A/high"], id["B/low"]}[i%3]
		rel(id["A/public"], pred, dst)
	}
	rel(id["A/medium"], "DEPENDS_ON", id["A/high"])
	// single-record revisions of hidden records, with rationales of their own.
	one := func(q, key string) {
		s.as(t, s.admin, url, q, map[string]any{"id": id[key], "r": s.word(key, "text")})
	}
	id["retracted"] = s.create(t, url, A, membrane.SensitivityHigh, "retracted")
	one(`mutation($id: ID!, $r: String) { retract(id: $id, rationale: $r) { id } }`, "retracted")
	one(`mutation($id: ID!, $r: String) { reinforce(id: $id, rationale: $r) { id } }`, "A/hyper")
	one(`mutation($id: ID!, $r: String) { penalize(id: $id, amount: 0.1, rationale: $r) { id } }`, "A/hyper")
	// a deleted and a pruned visible record, each related to hidden ones.
	id["deleted"] = s.create(t, url, A, public, "deleted")
	rel(id["deleted"], "RELATED_TO", id["A/high"])
	rel(id["A/hyper"], "REFERENCES", id["deleted"])
	s.as(t, s.admin, url, `mutation($id: ID!) { deleteRecord(id: $id, rationale: "gone") { id } }`, map[string]any{"id": id["deleted"]})
	id["pruned"] = s.create(t, url, A, public, "pruned")
	rel(id["pruned"], "RELATED_TO", id["A/hyper"])
	rel(id["B/hyper"], "MENTIONS", id["pruned"])
	s.as(t, s.admin, url, `mutation($id: ID!) { penalize(id: $id, amount: 10, rationale: "stale") { id } }`, map[string]any{"id": id["pruned"]})
	// captures naming entities: sealed entities in A (one for the probe of
	// each phase) and in B, a visible one in A.
	capture := func(scope string, level membrane.Sensitivity, key string, content map[string]any) []string {
		d := s.as(t, s.admin, s.srv.url, `mutation($in: CaptureMemoryInput!) { captureMemory(input: $in) { primary { id } created { id type payload { ... on EntityPayload { canonicalName } } } } }`,
			map[string]any{"in": map[string]any{"source": "agent", "scope": scope, "sensitivity": strings.ToUpper(string(level)), "tags": []any{s.tag}, "content": content}})
		cm := d["captureMemory"].(map[string]any)
		s.addItem(key+" capture", cm["primary"].(map[string]any)["id"].(string), scope, level)
		var keys []string
		for i, c := range cm["created"].([]any) {
			c := c.(map[string]any)
			k := fmt.Sprintf("%s created %d (%v)", key, i, c["type"])
			s.addItem(k, c["id"].(string), scope, level)
			if p, ok := c["payload"].(map[string]any); ok && p["canonicalName"] != nil {
				s.mu.Lock()
				// The name belongs to the entity (the capture holds it too,
				// at the same level and scope).
				for j := range s.needles {
					if s.needles[j].text == strings.ToLower(p["canonicalName"].(string)) {
						s.needles[j].owner, s.needles[j].kind = k, "name"
					}
				}
				s.mu.Unlock()
				keys = append(keys, k)
			}
		}
		return keys
	}
	names := map[string]any{}
	for _, k := range []string{"project", "person", "service"} {
		names[k] = s.word("A/high capture", "name")
	}
	s.ents = capture(A, membrane.SensitivityHigh, "A/high", names)
	if len(s.ents) != 3 {
		t.Fatalf("the capture made entities %v, want 3", s.ents)
	}
	capture(s.scopeB, hyper, "B/hyper", map[string]any{"project": s.word("B/hyper capture", "name"), "subject": s.word("B/hyper capture", "text"),
		"predicate": "uses", "object": s.word("B/hyper capture", "text")})
	// an entity with aliases and identifiers, sealed.
	ent := map[string]any{"type": "ENTITY", "scope": A, "sensitivity": "HIGH", "tags": []any{s.tag}, "payload": map[string]any{"entity": map[string]any{
		"canonicalName": s.word("A/high entity", "name"), "aliases": []any{map[string]any{"value": s.word("A/high entity", "name")}},
		"identifiers": []any{map[string]any{"namespace": "crm", "value": s.word("A/high entity", "text")}}, "summary": s.word("A/high entity", "text")}}}
	d := s.as(t, s.admin, s.srv.url, `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": ent})
	s.addItem("A/high entity", d["createRecord"].(map[string]any)["id"].(string), A, membrane.SensitivityHigh)
	// jobs: prune deletes the penalised record; consolidation runs.
	for _, job := range []string{"PRUNE", "CONSOLIDATE"} {
		d := s.as(t, s.admin, url, `mutation($j: JobName!) { runJob(job: $j) { outcome changed error } }`, map[string]any{"j": job})
		if r := d["runJob"].(map[string]any); r["outcome"] != "SUCCEEDED" {
			t.Fatalf("%s: %v", job, r)
		}
	}
	s.hidden = []string{"A/hyper", "B/low", "sup-new"}
	s.gone = map[string]bool{"deleted": true, "pruned": true}
	s.lineage = map[string]bool{"A/hyper": true, "A/low": true, "contested": true}
	for _, k := range []string{"sup", "sup2", "fork", "fork2", "merge"} {
		for _, suf := range []string{"-old", "-new", "-src", "-a", "-b", "d"} {
			s.lineage[k+suf] = true
		}
	}
}

// restart opens a new store (its start-up migrations run) and server over
// the same database, with the same keys.
func (s *leakScan) restart(t *testing.T) error {
	db, err := openScanStore(t, s.oldKey, neo4jtest.TestSealKey)
	s.srv = startScanServer(t, db, s.ring, []string{s.scopeA, s.scopeB, s.scopeC})
	return err
}

// rotate makes a new key active, reseals what the old one sealed, and
// restarts without the old key.
func (s *leakScan) rotate(t *testing.T) error {
	// A failed start-up is reported (returned) but does not stop the scan:
	// the store still serves.
	rotated, startErr := openScanStore(t, s.newKey, s.oldKey, neo4jtest.TestSealKey)
	res, err := rotated.Reseal(membrane.NewContextWithTrust(t.Context(), membrane.SystemTrust("leakscan")), s.oldKey.ID)
	if err != nil {
		t.Fatalf("reseal: %v", err)
	}
	if res.SkippedRecords > 0 || res.SkippedAudits > 0 {
		// Everything the scan sealed opens under the old key: a skipped
		// value would stay under a key the next phase lacks.
		t.Errorf("reseal skipped %d records and %d audit entries", res.SkippedRecords, res.SkippedAudits)
	}
	db, err := openScanStore(t, s.newKey, neo4jtest.TestSealKey)
	s.srv = startScanServer(t, db, s.ring, []string{s.scopeA, s.scopeB, s.scopeC})
	return errors.Join(startErr, err)
}

// probes are the writes a restricted writer can use as oracles: a capture
// naming a sealed entity of its scope (it must not be linked to it), and
// a record created with the id of a record it cannot see (the answer must
// be the one a fresh id gets).
func (s *leakScan) probes(t *testing.T, phase string, i int, report func(leak)) {
	w := s.writer
	name := ""
	for _, n := range s.needles {
		if n.owner == s.ents[i] && n.kind == "name" {
			name = n.text
		}
	}
	// The writer knows the name from now on: it writes it. What must not
	// reach it is the sealed entity's id (a link to it), which stays a
	// needle; its own capture and entity show the name, selected in full.
	s.mu.Lock()
	kept := s.needles[:0]
	for _, n := range s.needles {
		if n.text != name {
			kept = append(kept, n)
		}
	}
	s.needles = kept
	s.mu.Unlock()
	out, raw := w.post(t, s.srv.url, s.doc(`mutation($in: CaptureMemoryInput!) { captureMemory(input: $in) `+s.gen.of("CaptureResult", 1)+` }`),
		map[string]any{"in": map[string]any{"source": "probe", "scope": s.scopeA, "sensitivity": "LOW", "content": map[string]any{"project": name}}})
	s.scanDoc(phase, w, "captureMemory(probe)", out, report)
	if out["errors"] != nil || out["data"] == nil {
		t.Errorf("%s: the probe's capture failed, it scans nothing: %.2000s", phase, raw)
	}

	// Client-chosen ids (docs/security.md, "Client-chosen ids"): every
	// taken id gets one answer, so the id of a record the writer cannot see
	// must be answered exactly as the id of one it wrote itself.
	create := func(id, text string) string {
		in := map[string]any{"type": "SEMANTIC", "scope": s.scopeA, "sensitivity": "LOW", "payload": gqltest.Fact(text), "id": id}
		out, _ := w.post(t, s.srv.url, `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": in})
		if errs, ok := out["errors"].([]any); ok && len(errs) > 0 {
			e, _ := errs[0].(map[string]any)
			ext, _ := e["extensions"].(map[string]any)
			return fmt.Sprintf("%v: %v", ext["code"], e["message"])
		}
		return "created"
	}
	own := membrane.NewID()
	if got := create(own, "probe"); got != "created" {
		t.Fatalf("%s: a fresh id: %s", phase, got)
	}
	hidden := s.items[s.hidden[i]]
	if got, taken := create(hidden.id, "probe"), create(own, "probe again"); got != taken {
		report(leak{phase: phase, caller: w.name, op: "createRecord(id oracle)", path: "errors[0]=" + got, kind: "oracle",
			item: fmt.Sprintf("%s (%s): answered %q where an id the writer took itself is %q", hidden.key, hidden.id, got, taken)})
	}
}

// doc appends to query the record fragments it uses (an unused fragment
// fails validation).
func (s *leakScan) doc(query string) string {
	switch {
	case strings.Contains(query, "...R1"):
		return query + s.gen.fragments(1)
	case strings.Contains(query, "...R0"):
		return query + s.gen.fragments(0)
	}
	return query
}

// scanDoc scans one response (or event) for what caller may not see.
// The ids the caller sent (sent) may come back in error messages: the
// caller knows them.
func (s *leakScan) scanDoc(phase string, c scanCaller, op string, doc any, report func(leak), sent ...string) {
	s.mu.Lock()
	needles := append([]needle(nil), s.needles...)
	items := s.items
	s.mu.Unlock()
	var hidden []needle
	for _, n := range needles {
		switch vis := c.sees(items[n.owner]); {
		case vis == "none", vis == "redacted" && n.kind != "id":
			hidden = append(hidden, n)
		}
	}
	scanJSON(doc, "", hidden, func(path string, n needle) {
		if strings.HasPrefix(path, ".errors") && slices.Contains(sent, n.text) {
			return
		}
		it := items[n.owner]
		report(leak{phase: phase, caller: c.name, op: op, path: path, kind: n.kind + "/" + c.sees(it),
			item: fmt.Sprintf("%s of %s %q (%s %s)", n.kind, c.sees(it), it.key, it.level, scopeName(s, it.scope))})
	})
	// A response that fails INTERNAL is a finding too (it hides what
	// went wrong from the caller, and a page with it is lost).
	if m, ok := doc.(map[string]any); ok {
		if errs, ok := m["errors"].([]any); ok {
			for i, e := range errs {
				ext, _ := e.(map[string]any)["extensions"].(map[string]any)
				if ext["code"] == "INTERNAL" {
					report(leak{phase: phase, caller: c.name, op: op, path: fmt.Sprintf(".errors[%d].path=%s", i, errPath(e.(map[string]any)["path"])), kind: "INTERNAL",
						item: fmt.Sprint(e.(map[string]any)["message"])})
				}
			}
		}
	}
}

// errPath renders an error's path with list indices as [] and aliases of
// one root field as a*.
func errPath(p any) string {
	var parts []string
	ps, _ := p.([]any)
	for _, e := range ps {
		if _, ok := e.(float64); ok {
			parts = append(parts, "[]")
		} else {
			parts = append(parts, fmt.Sprint(e))
		}
	}
	return strings.Join(parts, ".")
}

// sentIDs returns the strings a request carries (lower case): its
// variables and the quoted strings of its text.
func sentIDs(query string, vars map[string]any) []string {
	var out []string
	b, _ := json.Marshal(vars)
	for _, m := range quotedRE.FindAllStringSubmatch(query+string(b), -1) {
		for _, w := range strings.Fields(m[1]) {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

var quotedRE = regexp.MustCompile(`"([^"]*)"`)

func scopeName(s *leakScan, scope string) string {
	switch scope {
	case s.scopeA:
		return "scope A"
	case s.scopeB:
		return "scope B"
	case "":
		return "unscoped"
	}
	return scope
}

// scanAs calls every read path as c and scans every response. Every root
// selection that can hold a record selects its records as R1 (R0 for the
// many text probes and audit aliases), and fails the test if it selects
// none; an error a path does not expect fails the test too, so that a path
// cannot scan nothing and pass.
func (s *leakScan) scanAs(t *testing.T, phase string, c scanCaller, sentinel string, report func(leak)) {
	url := s.srv.url
	// q runs query with SEL replaced by the selection of root's type, and
	// fails on any error whose code is not in expect.
	q := func(op, root string, depth int, query string, vars map[string]any, expect ...string) (map[string]any, []byte) {
		t.Helper()
		sel := s.gen.of(root, depth)
		if s.gen.holdsRecords(root) && !strings.Contains(sel, "...R") {
			t.Fatalf("%s: the selection of %s selects no record: %s", op, root, sel)
		}
		query = strings.ReplaceAll(query, "SEL", sel)
		out, raw := c.post(t, url, s.doc(query), vars)
		s.scanDoc(phase, c, op, out, report, sentIDs(query, vars)...)
		errs, _ := out["errors"].([]any)
		for _, e := range errs {
			ext, _ := e.(map[string]any)["extensions"].(map[string]any)
			code, _ := ext["code"].(string)
			if code != "INTERNAL" && !slices.Contains(expect, code) { // INTERNAL is reported as a finding
				t.Errorf("%s as %s: unexpected error (expected only %v): %.2000s", op, c.name, expect, raw)
				break
			}
		}
		return out, raw
	}
	// control fails unless every id of keys comes back in raw: a path that
	// returns nothing scans nothing.
	control := func(op string, raw []byte, keys ...string) {
		t.Helper()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, k := range keys {
			if !bytes.Contains(raw, []byte(`"`+s.items[k].id+`"`)) {
				t.Errorf("%s as %s: positive control %q (%s) not in the response: %.2000s", op, c.name, k, s.items[k].id, raw)
			}
		}
	}
	s.mu.Lock()
	var ids []string
	var hidden []needle // what the text probes must not find
	lineageIDs, notFound := map[string]bool{}, map[string]bool{}
	for _, it := range s.items {
		ids = append(ids, it.id)
		if s.lineage[it.key] {
			lineageIDs[it.id] = true
		}
		if c.sees(it) == "none" || s.gone[it.key] {
			notFound[it.id] = true
		}
	}
	for _, n := range s.needles {
		if vis := c.sees(s.items[n.owner]); vis == "none" || vis == "redacted" && n.kind != "id" {
			hidden = append(hidden, n)
		}
	}
	sentinelKey := ""
	for k, it := range s.items {
		if it.id == sentinel {
			sentinelKey = k
		}
	}
	// One word of a record every caller sees in full, and of the sentinel:
	// each probe must find them (its positive control).
	var controlWords []string
	for _, k := range []string{"A/public", sentinelKey} {
		for _, n := range s.needles {
			if n.owner == k && n.kind == "text" {
				controlWords = append(controlWords, n.text)
				break
			}
		}
	}
	s.mu.Unlock()
	sort.Strings(ids)
	sort.Slice(hidden, func(i, j int) bool { return hidden[i].kind+hidden[i].text < hidden[j].kind+hidden[j].text })
	for _, id := range ids {
		var expect []string
		if notFound[id] {
			expect = []string{"NOT_FOUND"}
		}
		q("record", "Record", 1, `query($id: ID!) { record(id: $id) SEL }`, map[string]any{"id": id}, expect...)
		q("graph", "Lineage", 1, `query($id: ID!) { graph(roots: [$id], hops: 10, limit: 2000) SEL }`, map[string]any{"id": id}, expect...)
		if !lineageIDs[id] {
			continue
		}
		q("lineage", "Lineage", 1, `query($id: ID!) { lineage(id: $id, direction: BOTH, maxDepth: 10, limit: 1000) SEL }`, map[string]any{"id": id}, expect...)
	}
	// The graph downloads (internal/http): the graph query's read written
	// as files for graph tools, per root as the query above. GraphML is
	// XML, scanned as one text; the error bodies are JSON.
	for _, id := range ids {
		for _, path := range []string{"/graph.cyjs", "/graph.graphml"} {
			op := "download " + path
			status, body := c.get(t, url+path+"?hops=10&limit=2000&roots="+neturl.QueryEscape(id))
			if want := map[bool]int{false: http.StatusOK, true: http.StatusNotFound}[notFound[id]]; status != want {
				t.Errorf("%s of %s as %s: status %d, want %d: %.2000s", op, id, c.name, status, want, body)
			}
			var doc any = string(body)
			if path != "/graph.graphml" || status != http.StatusOK {
				if err := json.Unmarshal(body, &doc); err != nil {
					t.Errorf("%s of %s as %s: %v: %.2000s", op, id, c.name, err, body)
				}
			}
			s.scanDoc(phase, c, op, doc, report, strings.ToLower(id))
			if status == http.StatusOK && !bytes.Contains(body, []byte(`"`+id+`"`)) {
				// The root itself: a download that holds nothing scans nothing.
				t.Errorf("%s of %s as %s: positive control, the root, not in it: %.2000s", op, id, c.name, body)
			}
		}
	}
	var b strings.Builder
	b.WriteString("query {")
	for i, id := range ids {
		fmt.Fprintf(&b, " a%d: auditLog(filter: {recordId: %q}, first: 200) SEL", i, id)
	}
	b.WriteString(" }")
	q("auditLog(recordId)", "AuditConnection", 0, b.String(), nil)
	b.Reset()
	fmt.Fprintf(&b, "query { all: auditLog(filter: {actor: %q}, first: 500) SEL", s.admin.actor)
	fmt.Fprintf(&b, " window: auditLog(filter: {actor: %q, since: %q, until: %q}, first: 500) SEL", s.admin.actor, s.since.Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, " jobs: auditLog(filter: {actor: %q, since: %q}, first: 500) SEL", membrane.JobActor, s.since.Format(time.RFC3339Nano))
	for _, a := range s.gen.s.Types["AuditAction"].EnumValues {
		fmt.Fprintf(&b, " %s: auditLog(filter: {actor: %q, action: %s}, first: 500) SEL", strings.ToLower(a.Name), s.admin.actor, a.Name)
	}
	b.WriteString(" }")
	q("auditLog(actor, action, since, until)", "AuditConnection", 0, b.String(), nil)

	scopes := []any{s.scopeA, s.scopeB}
	withU := []any{s.scopeA, s.scopeB, ""}
	_, raw := q("records(tags)", "RecordConnection", 1, `query($t: String!) { records(filter: {tags: [$t]}, first: 100) SEL }`, map[string]any{"t": s.tag})
	control("records(tags)", raw, "A/public", sentinelKey)
	page, raw := q("records(scopes)", "RecordConnection", 1, `query($s: [String!]) { records(filter: {scopes: $s}, first: 500) SEL }`, map[string]any{"s": scopes})
	control("records(scopes)", raw, "A/public", sentinelKey)
	_, raw = q("records(scopes, asOf)", "RecordConnection", 1, `query($s: [String!], $at: DateTime) { records(filter: {scopes: $s}, first: 500, asOf: $at) SEL }`,
		map[string]any{"s": scopes, "at": time.Now().UTC().Format(time.RFC3339Nano)})
	control("records(scopes, asOf)", raw, "A/public", sentinelKey)
	// The text probes: every hidden needle, in batches the analysis keeps
	// whole (at most MaxQueryTerms terms, the control words included).
	for i, batch := range probeBatches(hidden, controlWords) {
		text := strings.Join(batch, " ")
		op := fmt.Sprintf("(hidden text, batch %d)", i)
		_, raw := q("records"+op, "RecordConnection", 0, `query($s: [String!], $x: String) { records(filter: {scopes: $s, text: $x}, first: 500) SEL }`,
			map[string]any{"s": withU, "x": text})
		control("records"+op, raw, "A/public", sentinelKey)
		_, raw = q("retrieve"+op, "RetrieveResult", 0, `query($in: RetrieveInput!) { retrieve(input: $in) SEL }`,
			map[string]any{"in": map[string]any{"query": text, "scopes": withU, "limit": 100, "includeRetracted": true}})
		control("retrieve"+op, raw, "A/public", sentinelKey)
		_, raw = q("retrieveGraph"+op, "RetrieveGraphResult", 0, `query($in: RetrieveGraphInput!) { retrieveGraph(input: $in) SEL }`,
			map[string]any{"in": map[string]any{"query": text, "scopes": withU, "rootLimit": 100, "nodeLimit": 1000, "edgeLimit": 5000, "maxHops": 5}})
		control("retrieveGraph"+op, raw, "A/public", sentinelKey)
	}
	_, raw = q("retrieve(browse)", "RetrieveResult", 1, `query($in: RetrieveInput!) { retrieve(input: $in) SEL }`,
		map[string]any{"in": map[string]any{"scopes": scopes, "limit": 100, "includeRetracted": true}})
	control("retrieve(browse)", raw, "A/public", sentinelKey)
	_, raw = q("retrieveGraph(browse)", "RetrieveGraphResult", 1, `query($in: RetrieveGraphInput!) { retrieveGraph(input: $in) SEL }`,
		map[string]any{"in": map[string]any{"scopes": scopes, "rootLimit": 100, "nodeLimit": 1000, "edgeLimit": 5000, "maxHops": 5}})
	control("retrieveGraph(browse)", raw, "A/public", sentinelKey)
	var jobsExpect []string
	if c.role != membrane.RoleAdmin {
		jobsExpect = []string{"FORBIDDEN"}
	}
	q("jobRuns", "JobRunConnection", 1, `query { jobRuns(first: 50) SEL }`, nil, jobsExpect...)
	metrics, _ := q("metrics(scopes)", "Metrics", 1, `query($s: [String!]) { metrics(scopes: $s) SEL }`, map[string]any{"s": scopes})
	q("metrics", "Metrics", 1, `query { metrics SEL }`, nil)
	s.checkCounts(t, phase, c, page, metrics, report)
	s.checkCursor(t, phase, c, report)

	// Both subscriptions over both transports, replayed from before the
	// fixture up to this phase's sentinel.
	filter, subs := s.subscriptions()
	for name, sub := range subs {
		for _, tr := range []string{"ws", "sse"} {
			for _, ev := range c.subscribe(t, url, tr, sub, map[string]any{"f": filter, "after": s.cursor0}, sentinel) {
				s.scanDoc(phase, c, name+"("+tr+")", ev, report)
				if ev["errors"] != nil {
					t.Errorf("%s(%s) as %s: an event with errors: %v", name, tr, c.name, ev)
				}
			}
		}
	}
}

// subscriptions are the filter of the scan's subscriptions (the scopes
// and the fixture's writers) and both subscriptions, selecting every
// field, by name.
func (s *leakScan) subscriptions() (map[string]any, map[string]string) {
	filter := map[string]any{"scopes": []any{s.scopeA, s.scopeB, ""}, "actors": []any{s.admin.actor, s.writer.actor, membrane.JobActor}}
	return filter, map[string]string{
		"recordChanged": s.doc(`subscription($f: ChangeFilter, $after: String) { recordChanged(filter: $f, after: $after) ` + s.gen.of("RecordChange", 1) + ` }`),
		"auditAppended": s.doc(`subscription($f: ChangeFilter, $after: String) { auditAppended(filter: $f, after: $after) ` + s.gen.of("AuditEvent", 1) + ` }`),
	}
}

// followLive subscribes callers to both subscriptions (over
// WebSocket and SSE in turn) from the feed's head, and waits until each
// has received a first public record: from then on the fixture's events
// reach them live, each gated in memory as it is published
// (membrane.Trust.GateEvent), where scanAs's replays read the feed
// through the store's gate. The func it returns writes a last public
// record, waits for every subscriber to receive it and stops them.
func (s *leakScan) followLive(t *testing.T) func() []*follower {
	url := s.srv.url
	head := s.as(t, s.admin, url, `{ changeCursor }`, nil)["changeCursor"].(string)
	filter, subs := s.subscriptions()
	var fs []*follower
	// Four callers that cover every kind of visibility (redacted, hidden,
	// out of scope, narrowed by headers), not all seven: every subscriber
	// resolves each event's record fields in transactions of its own, and
	// fourteen streams at once ran more than the pool holds on a loaded
	// machine.
	for i, c := range []scanCaller{s.callers[1], s.callers[3], s.callers[5], s.callers[6]} {
		tr := []string{"ws", "sse"}[i%2]
		for _, name := range []string{"recordChanged", "auditAppended"} {
			fs = append(fs, follow(t.Context(), c, name+"(live "+tr+")", url, tr, subs[name], map[string]any{"f": filter, "after": head}))
		}
	}
	t.Cleanup(func() {
		for _, f := range fs {
			f.stop()
		}
	})
	first := s.create(t, url, s.scopeA, membrane.SensitivityPublic, "live start")
	for _, f := range fs {
		f.await(t, first)
	}
	return func() []*follower {
		last := s.create(t, url, s.scopeA, membrane.SensitivityPublic, "live end")
		for _, f := range fs {
			f.await(t, last)
			f.stop()
		}
		return fs
	}
}

// probeBatches splits the needles into queries that the analysis keeps
// whole: at most MaxQueryTerms terms each, control words included in each.
func probeBatches(hidden []needle, control []string) [][]string {
	var out [][]string
	cur := append([]string(nil), control...)
	full := len(control)
	for _, n := range hidden {
		next := append(append([]string(nil), cur...), n.text)
		if len(membrane.AnalyzeQuery(strings.Join(next, " "))) > membrane.MaxQueryTerms-4 && len(cur) > full {
			out = append(out, cur)
			cur = append(append([]string(nil), control...), n.text)
			continue
		}
		cur = next
	}
	if len(cur) > full {
		out = append(out, cur)
	}
	return out
}

// checkCounts compares what metrics count with what the caller can read:
// the records of the page and the audit entries it can list of them.
func (s *leakScan) checkCounts(t *testing.T, phase string, c scanCaller, page, metrics map[string]any, report func(leak)) {
	t.Helper()
	data, _ := page["data"].(map[string]any)
	mdata, _ := metrics["data"].(map[string]any)
	if data == nil || mdata == nil {
		t.Fatalf("%s: no page or no metrics to compare: %v %v", c.name, page, metrics)
	}
	var ids []string
	for _, n := range data["records"].(map[string]any)["nodes"].([]any) {
		ids = append(ids, n.(map[string]any)["id"].(string))
	}
	readable := 0
	if len(ids) > 0 {
		var b strings.Builder
		b.WriteString("query {")
		for i, id := range ids {
			fmt.Fprintf(&b, " a%d: auditLog(filter: {recordId: %q}, first: 500) { nodes { id } }", i, id)
		}
		b.WriteString(" }")
		out, raw := c.post(t, s.srv.url, b.String(), nil)
		d, _ := out["data"].(map[string]any)
		if d == nil {
			t.Fatalf("%s: audit count: %s", c.name, raw)
		}
		for _, v := range d {
			readable += len(v.(map[string]any)["nodes"].([]any))
		}
	}
	m := mdata["metrics"].(map[string]any)
	if n := int(m["auditEntries"].(float64)); n > readable {
		report(leak{phase: phase, caller: c.name, op: "metrics(scopes)", path: "data.metrics.auditEntries", kind: "count",
			item: fmt.Sprintf("%d audit entries counted, %d readable", n, readable)})
	}
	if n := int(m["totalRecords"].(float64)); n != len(ids) {
		report(leak{phase: phase, caller: c.name, op: "metrics(scopes)", path: "data.metrics.totalRecords", kind: "count",
			item: fmt.Sprintf("%d records counted, %d listed", n, len(ids))})
	}
}

// checkCursor: a write the caller cannot see (a HYPER record in a scope
// none of the callers has) moves the change cursor the caller reads. The
// cursor is one global position, documented as such (docs/security.md,
// "Change-feed cursors"); the check records the move so that the
// allow-list entry of finding 5 is really observed, and a cursor that
// stopped being global shows up as a stale entry.
//
// The write's audit entry is numbered asynchronously, by the feed's
// sequencer a moment after the commit: reading the cursor right after the
// write would read the head before it. Stepping the server's hub numbers
// every committed entry (ours included) before the cursor is read again.
func (s *leakScan) checkCursor(t *testing.T, phase string, c scanCaller, report func(leak)) {
	read := func() string {
		out, raw := c.post(t, s.srv.url, `{ changeCursor }`, nil)
		d, _ := out["data"].(map[string]any)
		if d == nil {
			t.Fatalf("%s: changeCursor: %s", c.name, raw)
		}
		return d["changeCursor"].(string)
	}
	before := read()
	in := map[string]any{"type": "SEMANTIC", "scope": s.scopeC, "sensitivity": "HYPER", "payload": gqltest.Fact("invisible write")}
	s.as(t, s.admin, s.srv.url, `mutation($in: RecordInput!) { createRecord(input: $in) { id } }`, map[string]any{"in": in})
	if err := s.srv.hub.Tick(t.Context()); err != nil {
		t.Fatalf("%s: numbering the feed: %v", c.name, err)
	}
	if after := read(); after != before {
		report(leak{phase: phase, caller: c.name, op: "changeCursor", path: "data.changeCursor", kind: "cursor",
			item: fmt.Sprintf("%s -> %s after a write the caller cannot see", before, after)})
	}
}

// scanAtRest reads the database directly, as someone holding its files
// would, for the plaintext of sealed records and entities, and for unkeyed
// digests of their text.
func (s *leakScan) scanAtRest(t *testing.T, phase string, report func(leak)) {
	ctx := context.Background()
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), driver.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	s.mu.Lock()
	var ids []string
	for _, it := range s.items {
		ids = append(ids, it.id)
	}
	var sealedText []needle
	for _, n := range s.needles {
		if n.kind != "id" && s.items[n.owner].level.Level() >= membrane.SensitivityHigh.Level() {
			sealedText = append(sealedText, n)
		}
	}
	digests := map[string]string{}
	for _, f := range s.sealed {
		h := sha256.New()
		for _, p := range []string{f.scope, f.subject, f.predicate, f.object} {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		digests[hex.EncodeToString(h.Sum(nil))] = f.key
	}
	items := s.items
	s.mu.Unlock()
	const query = `
MATCH (m:Memory) WHERE m.scope IN $scopes RETURN labels(m) AS l, properties(m) AS p
UNION ALL MATCH (m:Memory) WHERE m.id IN $ids AND m.scope = '' RETURN labels(m) AS l, properties(m) AS p
UNION ALL MATCH (a:AuditEntry) WHERE a.recordId IN $ids RETURN labels(a) AS l, properties(a) AS p
UNION ALL MATCH (m:Memory)-[r]-() WHERE m.scope IN $scopes OR m.id IN $ids RETURN [type(r)] AS l, properties(r) AS p
UNION ALL MATCH (m:Memory)--(o) WHERE (m.scope IN $scopes OR m.id IN $ids) AND NOT o:Memory AND NOT o:AuditEntry RETURN labels(o) AS l, properties(o) AS p
UNION ALL MATCH (x:DeletedRecordId) WHERE x.id IN $ids RETURN labels(x) AS l, properties(x) AS p`
	res, err := driver.ExecuteQuery(ctx, d, query, map[string]any{"scopes": []any{s.scopeA, s.scopeB, s.scopeC}, "ids": ids}, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Records {
		labels, _ := row.Values[0].([]any)
		props, _ := row.Values[1].(map[string]any)
		raw, _ := json.Marshal(props)
		var doc map[string]any
		_ = json.Unmarshal(raw, &doc)
		where := fmt.Sprintf("%v", labels)
		scanJSON(doc, where, sealedText, func(path string, n needle) {
			it := items[n.owner]
			report(leak{phase: phase, caller: "database at rest", op: "node/relationship properties", path: path, kind: n.kind + "/sealed",
				item: fmt.Sprintf("%s of %q (%s) in clear on %v %v", n.kind, it.key, it.level, labels, props["id"])})
		})
		for k, v := range doc {
			if key, ok := digests[fmt.Sprint(v)]; ok {
				report(leak{phase: phase, caller: "database at rest", op: "node/relationship properties", path: where + "." + k, kind: "unkeyed digest",
					item: fmt.Sprintf("unkeyed SHA-256 of the text of sealed %q", key)})
			}
		}
	}
	// The full-text indexes: an index holds its own copy of what it
	// indexed (until it catches up), and may index a property of a node
	// the reads above do not reach. Every sealed word is queried in every
	// index, once the indexes hold what was written.
	if err := s.srv.db.AwaitSearchIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = driver.ExecuteQuery(ctx, d, `SHOW FULLTEXT INDEXES YIELD name, entityType RETURN name, entityType`, nil, driver.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	words := make([]string, 0, len(sealedText)+1)
	for _, n := range sealedText {
		words = append(words, n.text)
	}
	// The positive control: a word of a public record, indexed in clear.
	control := ""
	s.mu.Lock()
	for _, n := range s.needles {
		if n.owner == "A/public" && n.kind == "text" {
			control = n.text
			break
		}
	}
	s.mu.Unlock()
	words = append(words, control)
	indexes, controlFound := 0, false
	for _, row := range res.Records {
		index, _ := row.Values[0].(string)
		proc := "db.index.fulltext.queryNodes"
		if row.Values[1] == "RELATIONSHIP" {
			proc = "db.index.fulltext.queryRelationships"
		}
		indexes++
		// Each needle is one lower-case word that no analysis changes
		// (leakScan.word), so a hit is the word itself.
		hits, err := driver.ExecuteQuery(ctx, d, `UNWIND $words AS w CALL `+proc+`($index, w) YIELD score RETURN DISTINCT w`,
			map[string]any{"index": index, "words": words}, driver.EagerResultTransformer)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits.Records {
			w, _ := h.Values[0].(string)
			controlFound = controlFound || w == control
			for _, n := range sealedText {
				if n.text == w {
					it := items[n.owner]
					report(leak{phase: phase, caller: "database at rest", op: "full-text index", path: index, kind: n.kind + "/sealed",
						item: fmt.Sprintf("%s of %q (%s) found by the index %s", n.kind, it.key, it.level, index)})
				}
			}
		}
	}
	if indexes == 0 || !controlFound {
		t.Fatalf("%s: the full-text indexes (%d) do not find %q, a word of a public record: the index scan finds nothing", phase, indexes, control)
	}
}
