package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// entrySel selects everything an audit entry shows.
const entrySel = `id recordId action actor actorDetail timestamp rationale previous removedEdges related { role recordId predicate }`

// auditWorld is a set of revisions between records a LOW reader of scope
// sees (visible), one it sees redacted (medium) and HYPER records in its
// scope and in another one (hidden), each with its expected reference.
type auditWorld struct {
	admin, low, cleared *client
	scope               string
	visible             []string
	hidden              map[string]string // id -> what it is
	medium              string
	// want: visible record -> the references (role, record id) a cleared
	// reader must find in its trail.
	want map[string][][2]string
	// from is the change feed's position before the first write, marker a
	// record written after the last.
	from, marker string
	deleted      string
}

func newAuditWorld(t *testing.T, setup func(*gqltest.Wiring)) *auditWorld {
	scope, other := neo4jtest.Scope(t), neo4jtest.Scope(t)+"-other"
	low := membrane.Principal{Actor: "low-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	cleared := membrane.Principal{Actor: "cleared-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityHyper, Scopes: []string{scope, other}}
	c := newClientWith(t, func(w *gqltest.Wiring) {
		w.Stores.Deletes = w.DB
		if setup != nil {
			setup(w)
		}
	}, low, cleared)
	w := &auditWorld{admin: c, low: c.as(low.Actor), cleared: c.as(cleared.Actor), scope: scope,
		hidden: map[string]string{}, want: map[string][][2]string{}}
	w.from = c.ChangeCursor()
	rec := func(sc, sens, subject string) string {
		return c.Create(sc, "SEMANTIC", gqltest.Fact(subject), map[string]any{"sensitivity": sens})
	}
	hide := func(id, what string) string { w.hidden[id] = what; return id }
	expect := func(visible, role, id string) {
		if w.want[visible] == nil {
			w.visible = append(w.visible, visible)
		}
		w.want[visible] = append(w.want[visible], [2]string{role, id})
	}
	in := func(sens, subject string) map[string]any {
		return map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": sens, "payload": gqltest.Fact(subject)}
	}
	var out struct {
		Supersede, Fork, Merge struct{ ID string }
	}

	// Supersede, both ways: a LOW record replaced by a HYPER one, a HYPER
	// one by a LOW one.
	old := rec(scope, "LOW", "old low")
	c.Do(`mutation($o: ID!, $in: RecordInput!) { supersede(oldId: $o, newRecord: $in, rationale: "moved up") { id } }`,
		map[string]any{"o": old, "in": in("HYPER", "successor hyper")}, &out)
	expect(old, "SUPERSEDED_BY", hide(out.Supersede.ID, "hyper successor"))
	hOld := hide(rec(scope, "HYPER", "old hyper"), "hyper superseded")
	c.Do(`mutation($o: ID!, $in: RecordInput!) { supersede(oldId: $o, newRecord: $in, rationale: "moved down") { id } }`,
		map[string]any{"o": hOld, "in": in("LOW", "successor low")}, &out)
	expect(out.Supersede.ID, "SUPERSEDES", hOld)

	// Fork, both ways.
	src := rec(scope, "LOW", "fork source low")
	c.Do(`mutation($s: ID!, $in: RecordInput!) { fork(sourceId: $s, newRecord: $in, rationale: "variant") { id } }`,
		map[string]any{"s": src, "in": in("HYPER", "fork hyper")}, &out)
	expect(src, "FORKED_TO", hide(out.Fork.ID, "hyper fork"))
	hSrc := hide(rec(scope, "HYPER", "fork source hyper"), "hyper fork source")
	c.Do(`mutation($s: ID!, $in: RecordInput!) { fork(sourceId: $s, newRecord: $in, rationale: "variant") { id } }`,
		map[string]any{"s": hSrc, "in": in("LOW", "fork low")}, &out)
	expect(out.Fork.ID, "FORKED_FROM", hSrc)

	// Merge of a LOW and a HYPER record into a LOW one.
	mLow, mHyper := rec(scope, "LOW", "merge low"), hide(rec(scope, "HYPER", "merge hyper"), "hyper merged")
	c.Do(`mutation($ids: [ID!]!, $in: RecordInput!) { merge(ids: $ids, mergedRecord: $in, rationale: "same") { id } }`,
		map[string]any{"ids": []any{mLow, mHyper}, "in": in("LOW", "merged low")}, &out)
	expect(out.Merge.ID, "MERGED_FROM", mHyper)
	expect(mLow, "MERGED_INTO", out.Merge.ID)

	// Contest, both ways, across scopes: a HYPER record of another scope
	// contests a LOW one, a LOW one contests a HYPER one.
	contested, hContester := rec(scope, "LOW", "contested low"), hide(rec(other, "HYPER", "contester hyper"), "hyper contester elsewhere")
	c.Do(`mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref, rationale: "disagrees") { id } }`,
		map[string]any{"id": contested, "ref": hContester}, nil)
	expect(contested, "CONTESTED_BY", hContester)
	contester, hContested := rec(scope, "LOW", "contester low"), hide(rec(scope, "HYPER", "contested hyper"), "hyper contested")
	c.Do(`mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref, rationale: "hyper secret reason") { id } }`,
		map[string]any{"id": hContested, "ref": contester}, nil)
	expect(contester, "CONTESTS", hContested)

	// Relations, both ways, and one to a record the reader sees redacted.
	relSrc, hTgt := rec(scope, "LOW", "relation source low"), hide(rec(other, "HYPER", "relation target hyper"), "hyper target elsewhere")
	relTgt, hSrcRel := rec(scope, "LOW", "relation target low"), hide(rec(scope, "HYPER", "relation source hyper"), "hyper relation source")
	w.medium = rec(scope, "MEDIUM", "medium")
	for _, e := range [][2]string{{relSrc, hTgt}, {hSrcRel, relTgt}, {relSrc, w.medium}} {
		c.Do(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: SUPPORTS, targetId: $t, rationale: "because") { weight } }`,
			map[string]any{"s": e[0], "t": e[1]}, nil)
	}
	expect(relSrc, "RELATED_TO", hTgt)
	expect(relSrc, "RELATED_TO", w.medium) // seen redacted: named by its id
	expect(relTgt, "RELATED_FROM", hSrcRel)

	// A deleted LOW entity with an edge to a HYPER record: its tombstone.
	gone := c.Create(scope, "ENTITY", map[string]any{"entity": map[string]any{"canonicalName": "gone-" + membrane.NewID()}}, map[string]any{"sensitivity": "LOW"})
	hMentions := hide(rec(scope, "HYPER", "mentions hyper"), "hyper mentioning the deleted")
	c.Do(`mutation($s: ID!, $t: ID!) { addRelation(sourceId: $s, predicate: MENTIONS, targetId: $t) { weight } }`,
		map[string]any{"s": hMentions, "t": gone}, nil)
	c.Do(`mutation($id: ID!) { deleteRecord(id: $id, rationale: "gdpr") { id } }`, map[string]any{"id": gone}, nil)
	expect(gone, "REMOVED_EDGE_IN", hMentions)
	w.deleted = gone
	w.marker = rec(scope, "PUBLIC", "marker")
	return w
}

// leaks returns what of the hidden records body shows.
func (w *auditWorld) leaks(body string) []string {
	var out []string
	for id, what := range w.hidden {
		if strings.Contains(body, id) {
			out = append(out, what+" "+id)
		}
	}
	if strings.Contains(body, "hyper secret reason") {
		out = append(out, "the rationale written for a HYPER record")
	}
	return out
}

func TestAuditReferencesGated(t *testing.T) {
	setup, _ := gqltest.WithFeed(t)
	w := newAuditWorld(t, setup)

	// Every read path: the whole JSON of the LOW reader's answers never
	// names a hidden record (nor the words written for one); the
	// references subtest checks that what it may see is there, and that
	// the cleared reader sees every reference.
	read := func(t *testing.T, c *client) map[string]string {
		t.Helper()
		bodies := map[string]string{}
		for _, id := range w.visible {
			var raw json.RawMessage
			c.Do(`query($id: ID!) { auditLog(filter: {recordId: $id}, first: 100) { nodes { `+entrySel+` } } }`, map[string]any{"id": id}, &raw)
			bodies["auditLog "+id] = string(raw)
			if id == w.deleted {
				continue
			}
			c.Do(`query($id: ID!) { lineage(id: $id, direction: BOTH, limit: 20) { nodes { record { id auditLog(first: 10) { nodes { `+entrySel+` } } } } edges { sourceId targetId } } }`,
				map[string]any{"id": id}, &raw)
			bodies["lineage "+id] = string(raw)
		}
		var raw json.RawMessage
		c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 50) { nodes { id provenance { sources { ref } } auditLog(first: 10) { nodes { `+entrySel+` } } } } }`,
			map[string]any{"s": []any{w.scope}}, &raw)
		bodies["records"] = string(raw)
		return bodies
	}
	t.Run("low reader sees no hidden id", func(t *testing.T) {
		for path, body := range read(t, w.low) {
			if l := w.leaks(body); len(l) > 0 {
				t.Errorf("%s shows %v:\n%s", path, l, body)
			}
		}
	})
	t.Run("low reader's subscriptions show no hidden id", func(t *testing.T) {
		for name, q := range map[string]string{
			"recordChanged": `subscription($f: ChangeFilter, $after: String) { recordChanged(filter: $f, after: $after) { recordId redacted record { id provenance { sources { ref } } auditLog(first: 10) { nodes { ` + entrySel + ` } } } } }`,
			"auditAppended": `subscription($f: ChangeFilter, $after: String) { auditAppended(filter: $f, after: $after) { entry { ` + entrySel + ` } } }`,
		} {
			s := w.low.SubscribeSSE(t, w.admin.URL, q, map[string]any{"after": w.from, "f": map[string]any{"scopes": []any{w.scope}}})
			for events := 0; ; events++ {
				ev := s.Next()
				if len(ev.Errors) > 0 {
					t.Fatalf("%s: %+v", name, ev.Errors)
				}
				if l := w.leaks(string(ev.Data)); len(l) > 0 {
					t.Errorf("%s event shows %v:\n%s", name, l, ev.Data)
				}
				if strings.Contains(string(ev.Data), w.marker) {
					if events < 10 {
						t.Fatalf("%s: only %d events before the marker", name, events)
					}
					break
				}
			}
		}
	})
	t.Run("references", func(t *testing.T) {
		for who, c := range map[string]*client{"low": w.low, "cleared": w.cleared} {
			for _, id := range w.visible {
				var out struct {
					AuditLog struct {
						Nodes []struct {
							Related []struct{ Role, RecordID string }
						}
					}
				}
				c.Do(`query($id: ID!) { auditLog(filter: {recordId: $id}, first: 100) { nodes { related { role recordId } } } }`, map[string]any{"id": id}, &out)
				got := map[[2]string]bool{}
				for _, n := range out.AuditLog.Nodes {
					for _, r := range n.Related {
						got[[2]string{r.Role, r.RecordID}] = true
					}
				}
				for _, want := range w.want[id] {
					_, hidden := w.hidden[want[1]]
					if (who == "cleared" || !hidden) && !got[want] {
						t.Errorf("%s: trail of %s lacks %v (has %v)", who, id, want, got)
					}
				}
			}
		}
	})
}

// TestLiveAuditReferencesGated: on the live path of a subscription (the
// shared reader's events, gated in memory per subscriber, not the
// catch-up read), a LOW reader's event for a record that supersedes a
// HYPER one carries no reference to it.
func TestLiveAuditReferencesGated(t *testing.T) {
	setup, _ := gqltest.WithFeed(t)
	scope := neo4jtest.Scope(t)
	low := membrane.Principal{Actor: "low-" + membrane.NewID(), Role: membrane.RoleReader, MaxSensitivity: membrane.SensitivityLow, Scopes: []string{scope}}
	c := newClientWith(t, setup, low)
	hyper := c.Create(scope, "SEMANTIC", gqltest.Fact("old hyper"), map[string]any{"sensitivity": "HYPER"})

	// No cursor: the subscription starts at the head and follows the
	// shared reader. It is the hub's only follower, so it joins it at
	// once; the probe's event arriving shows it is following.
	s := c.as(low.Actor).SubscribeSSE(t, c.URL, `subscription($f: ChangeFilter) { auditAppended(filter: $f) { entry { `+entrySel+` } } }`,
		map[string]any{"f": map[string]any{"scopes": []any{scope}}})
	type appended struct {
		AuditAppended struct{ Entry struct{ RecordID string } }
	}
	next := func() (appended, string) {
		ev := s.Next()
		if len(ev.Errors) > 0 {
			t.Fatalf("event errors: %+v", ev.Errors)
		}
		var out appended
		if err := json.Unmarshal(ev.Data, &out); err != nil {
			t.Fatalf("decode %s: %v", ev.Data, err)
		}
		return out, string(ev.Data)
	}
	probe := c.Create(scope, "SEMANTIC", gqltest.Fact("probe"), map[string]any{"sensitivity": "LOW"})
	if ev, body := next(); ev.AuditAppended.Entry.RecordID != probe {
		t.Fatalf("first event %s, want the probe's", body)
	}

	var out struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, map[string]any{"old": hyper, "in": map[string]any{"type": "SEMANTIC", "scope": scope, "sensitivity": "LOW",
		"payload": gqltest.Fact("successor low")}}, &out)
	ev, body := next()
	if ev.AuditAppended.Entry.RecordID != out.Supersede.ID {
		t.Fatalf("event %s, want the successor's entry", body)
	}
	if strings.Contains(body, hyper) {
		t.Fatalf("the LOW reader's live event names the HYPER record it superseded: %s", body)
	}
}
