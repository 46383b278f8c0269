package graph_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/gqltest"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// rec is the part of a record revision tests look at.
type rec struct {
	ID        string
	Type      string
	Status    string
	Salience  float64
	Version   int
	CreatedAt string
	Lifecycle struct {
		LastReinforcedAt string
		MinSalience      float64
	}
	Provenance struct {
		Sources []struct{ Kind, Ref string }
	}
	ContestEvidence []string
	Supersedes      []struct{ ID string }
	SupersededBy    *struct{ ID string }
	DerivedFrom     []struct{ ID string }
	Derivatives     []struct{ ID string }
	ContestedBy     []struct{ ID string }
	Contests        []struct{ ID string }
	Current         struct{ ID string }
	History         []struct{ ID string }
	AuditLog        struct {
		Nodes []struct {
			Action, Actor, ActorDetail, Rationale string
			Previous                              map[string]any
		}
	}
}

const recSel = `id type status salience version createdAt lifecycle { lastReinforcedAt minSalience } provenance { sources { kind ref } }
  contestEvidence supersedes { id } supersededBy { id } derivedFrom { id } derivatives { id } contestedBy { id } contests { id }
  current { id } history { id } auditLog(first: 100) { nodes { action actor actorDetail rationale previous } }`

func (c *client) get(id string) rec {
	c.T.Helper()
	var out struct{ Record rec }
	c.Do(`query($id: ID!) { record(id: $id) { `+recSel+` } }`, map[string]any{"id": id}, &out)
	return out.Record
}

func factInput(scope, subject string) map[string]any {
	return map[string]any{"type": "SEMANTIC", "scope": scope, "payload": gqltest.Fact(subject)}
}

// snapshot captures everything a failed revision must leave unchanged: the
// records of scope with their versions, statuses, edges and audit trails.
func (c *client) snapshot(scope string) string {
	c.T.Helper()
	var out json.RawMessage
	c.Do(`query($s: [String!]) { records(filter: {scopes: $s}, first: 500) { totalCount nodes { id version status salience
	  relations(first: 100) { edges { direction relation { predicate sourceId targetId weight } } }
	  auditLog(first: 100) { nodes { id action } } } } }`, map[string]any{"s": []any{scope}}, &out)
	return string(out)
}

const (
	supersedeQ = `mutation($old: ID!, $in: RecordInput!, $v: Int, $k: String) { supersede(oldId: $old, newRecord: $in, actor: "agent-1", rationale: "newer info", expectedVersion: $v, idempotencyKey: $k) { id status version } }`
	retractQ   = `mutation($id: ID!, $k: String) { retract(id: $id, actor: "agent-1", rationale: "wrong", idempotencyKey: $k) { id status salience } }`
	mergeQ     = `mutation($ids: [ID!]!, $in: RecordInput!) { merge(ids: $ids, mergedRecord: $in, actor: "agent-1", rationale: "same fact") { id } }`
)

func TestSupersede(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	old := c.Create(scope, "SEMANTIC", gqltest.Fact("db"), nil)
	var out struct{ Supersede struct{ ID, Status string } }
	c.Do(supersedeQ, map[string]any{"old": old, "in": factInput(scope, "db2"), "v": 1}, &out)
	nw := out.Supersede.ID

	o := c.get(old)
	// Superseded, told apart from a retraction (it was RETRACTED).
	if o.Status != "SUPERSEDED" || o.Salience != 0 || o.Version != 2 {
		t.Fatalf("old = %+v", o)
	}
	if o.SupersededBy == nil || o.SupersededBy.ID != nw || o.Current.ID != nw {
		t.Fatalf("old.supersededBy = %v, current = %v, want %s", o.SupersededBy, o.Current, nw)
	}
	last := o.AuditLog.Nodes[len(o.AuditLog.Nodes)-1]
	if last.Action != "SUPERSEDE" || last.Actor != c.Actor || last.ActorDetail != "agent-1" || last.Previous["status"] != "ACTIVE" || last.Previous["salience"] != 1.0 {
		t.Fatalf("old audit = %+v", last)
	}
	n := c.get(nw)
	if n.Status != "ACTIVE" || len(n.Supersedes) != 1 || n.Supersedes[0].ID != old || n.SupersededBy != nil || n.Current.ID != nw {
		t.Fatalf("new = %+v", n)
	}
	if len(n.AuditLog.Nodes) != 1 || n.AuditLog.Nodes[0].Action != "CREATE" {
		t.Fatalf("new audit = %+v", n.AuditLog)
	}
	// The SUPERSEDES edge and the audit references (gated) name the old
	// record; the provenance, shown to whoever sees the new one, does not.
	for _, s := range n.Provenance.Sources {
		if s.Ref == old {
			t.Fatalf("new provenance %+v cites the old record", n.Provenance)
		}
	}
	// A chain: supersede the new one again; history is oldest first from anywhere.
	var out2 struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, map[string]any{"old": nw, "in": factInput(scope, "db3")}, &out2)
	for _, id := range []string{old, nw, out2.Supersede.ID} {
		r := c.get(id)
		var h []string
		for _, x := range r.History {
			h = append(h, x.ID)
		}
		if !reflect.DeepEqual(h, []string{old, nw, out2.Supersede.ID}) || r.Current.ID != out2.Supersede.ID {
			t.Fatalf("history from %s = %v, current %s", id, h, r.Current.ID)
		}
	}
}

func TestRevisionFailuresChangeNothing(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	sem := c.Create(scope, "SEMANTIC", gqltest.Fact("a"), nil)
	sem2 := c.Create(scope, "SEMANTIC", gqltest.Fact("b"), nil)
	ep := c.Create(scope, "EPISODIC", map[string]any{"episodic": map[string]any{}}, nil)
	ent := c.Create(scope, "ENTITY", map[string]any{"entity": map[string]any{"canonicalName": "e"}}, nil)
	gone := c.Create(scope, "SEMANTIC", gqltest.Fact("gone"), nil)
	c.Do(retractQ, map[string]any{"id": gone}, nil)
	noEvidence := map[string]any{"type": "SEMANTIC", "scope": scope, "payload": map[string]any{"semantic": map[string]any{"subject": "s", "predicate": "p"}}}
	entityIn := map[string]any{"type": "ENTITY", "scope": scope, "payload": map[string]any{"entity": map[string]any{"canonicalName": "x"}}}

	tests := []struct {
		name  string
		code  string
		query string
		vars  map[string]any
	}{
		{"supersede missing", "NOT_FOUND", supersedeQ, map[string]any{"old": "missing-" + scope, "in": factInput(scope, "x")}},
		{"supersede episodic", "FAILED_PRECONDITION", supersedeQ, map[string]any{"old": ep, "in": map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{}}}}},
		{"supersede with another type", "BAD_USER_INPUT", supersedeQ, map[string]any{"old": sem, "in": entityIn}},
		{"supersede semantic without evidence", "BAD_USER_INPUT", supersedeQ, map[string]any{"old": sem, "in": noEvidence}},
		{"supersede retracted", "CONFLICT", supersedeQ, map[string]any{"old": gone, "in": factInput(scope, "x")}},
		{"supersede stale version", "CONFLICT", supersedeQ, map[string]any{"old": sem, "in": factInput(scope, "x"), "v": 7}},
		{"supersede invalid new record", "BAD_USER_INPUT", supersedeQ, map[string]any{"old": sem, "in": map[string]any{"type": "SEMANTIC", "confidence": 3, "scope": scope, "payload": gqltest.Fact("x")}}},
		{"fork to another type", "BAD_USER_INPUT", `mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, actor: "a") { id } }`, map[string]any{"id": sem, "in": entityIn}},
		{"fork episodic", "FAILED_PRECONDITION", `mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, actor: "a") { id } }`, map[string]any{"id": ep, "in": map[string]any{"type": "EPISODIC", "scope": scope, "payload": map[string]any{"episodic": map[string]any{}}}}},
		{"retract episodic", "FAILED_PRECONDITION", retractQ, map[string]any{"id": ep}},
		{"retract twice", "CONFLICT", retractQ, map[string]any{"id": gone}},
		{"merge with a missing id", "NOT_FOUND", mergeQ, map[string]any{"ids": []any{sem, "missing-" + scope}, "in": factInput(scope, "m")}},
		{"merge duplicate ids", "BAD_USER_INPUT", mergeQ, map[string]any{"ids": []any{sem, sem}, "in": factInput(scope, "m")}},
		{"merge one id", "BAD_USER_INPUT", mergeQ, map[string]any{"ids": []any{sem}, "in": factInput(scope, "m")}},
		{"merge mixed types", "BAD_USER_INPUT", mergeQ, map[string]any{"ids": []any{sem, ent}, "in": factInput(scope, "m")}},
		{"merge a retracted record", "CONFLICT", mergeQ, map[string]any{"ids": []any{sem, gone}, "in": factInput(scope, "m")}},
		{"merge episodic", "FAILED_PRECONDITION", mergeQ, map[string]any{"ids": []any{sem, ep}, "in": factInput(scope, "m")}},
		{"contest episodic", "FAILED_PRECONDITION", `mutation($id: ID!) { contest(id: $id, contestingRef: "https://x", actor: "a") { id } }`, map[string]any{"id": ep}},
		{"contest itself", "BAD_USER_INPUT", `mutation($id: ID!, $ref: String!) { contest(id: $id, contestingRef: $ref, actor: "a") { id } }`, map[string]any{"id": sem, "ref": sem}},
		{"contest with empty ref", "BAD_USER_INPUT", `mutation($id: ID!) { contest(id: $id, contestingRef: "", actor: "a") { id } }`, map[string]any{"id": sem}},
		{"reinforce episodic", "FAILED_PRECONDITION", `mutation($id: ID!) { reinforce(id: $id, actor: "a") { id } }`, map[string]any{"id": ep}},
		{"penalize episodic", "FAILED_PRECONDITION", `mutation($id: ID!) { penalize(id: $id, amount: 0.1, actor: "a") { id } }`, map[string]any{"id": ep}},
		{"penalize negative", "BAD_USER_INPUT", `mutation($id: ID!) { penalize(id: $id, amount: -0.1, actor: "a") { id } }`, map[string]any{"id": sem}},
		{"actor detail over 256 bytes", "BAD_USER_INPUT", `mutation($id: ID!, $a: String) { reinforce(id: $id, actor: $a) { id } }`, map[string]any{"id": sem, "a": strings.Repeat("a", 257)}},
		{"relate with a lineage predicate", "BAD_USER_INPUT", `mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: SUPERSEDES, targetId: $b, actor: "a") { weight } }`, map[string]any{"a": sem, "b": sem2}},
		{"relate weight above 1", "BAD_USER_INPUT", `mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: $b, weight: 2, actor: "a") { weight } }`, map[string]any{"a": sem, "b": sem2}},
		{"relate to a missing record", "NOT_FOUND", `mutation($a: ID!) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: "missing", actor: "a") { weight } }`, map[string]any{"a": sem}},
		{"relate an unknown predicate", "", `mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: LOVES, targetId: $b, actor: "a") { weight } }`, map[string]any{"a": sem, "b": sem2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := c.snapshot(scope)
			resp := c.Raw(tt.query, tt.vars)
			if len(resp.Errors) == 0 {
				t.Fatalf("want an error, got %s", resp.Data)
			}
			if code := resp.Errors[0].Extensions["code"]; tt.code != "" && code != tt.code {
				t.Fatalf("code = %v, want %s (%s)", code, tt.code, resp.Errors[0].Message)
			}
			if after := c.snapshot(scope); after != before {
				t.Fatalf("a failed revision changed the database:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestForkMergeContestRetract(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	t.Run("fork", func(t *testing.T) {
		src := c.Create(scope, "SEMANTIC", gqltest.Fact("f"), nil)
		var out struct{ Fork struct{ ID string } }
		c.Do(`mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, actor: "agent-2", rationale: "only on linux") { id } }`,
			map[string]any{"id": src, "in": factInput(scope, "f-linux")}, &out)
		s, f := c.get(src), c.get(out.Fork.ID)
		if s.Status != "ACTIVE" || s.Salience != 1 || len(s.Derivatives) != 1 || s.Derivatives[0].ID != f.ID {
			t.Fatalf("source = %+v", s)
		}
		if f.Status != "ACTIVE" || len(f.DerivedFrom) != 1 || f.DerivedFrom[0].ID != src {
			t.Fatalf("fork = %+v", f)
		}
		if a := s.AuditLog.Nodes[len(s.AuditLog.Nodes)-1]; a.Action != "FORK" || a.Actor != c.Actor || a.ActorDetail != "agent-2" {
			t.Fatalf("source audit = %+v", a)
		}
	})
	t.Run("merge", func(t *testing.T) {
		a, b, cc := c.Create(scope, "COMPETENCE", map[string]any{"competence": map[string]any{"skillName": "a"}}, nil),
			c.Create(scope, "COMPETENCE", map[string]any{"competence": map[string]any{"skillName": "b"}}, nil),
			c.Create(scope, "COMPETENCE", map[string]any{"competence": map[string]any{"skillName": "c"}}, nil)
		var out struct{ Merge struct{ ID string } }
		c.Do(mergeQ, map[string]any{"ids": []any{a, b, cc}, "in": map[string]any{"type": "COMPETENCE", "scope": scope,
			"payload": map[string]any{"competence": map[string]any{"skillName": "abc"}}}}, &out)
		m := c.get(out.Merge.ID)
		if len(m.DerivedFrom) != 3 {
			t.Fatalf("merged derivedFrom = %+v", m.DerivedFrom)
		}
		for _, id := range []string{a, b, cc} {
			s := c.get(id)
			last := s.AuditLog.Nodes[len(s.AuditLog.Nodes)-1]
			if s.Status != "RETRACTED" || s.Salience != 0 || len(s.Derivatives) != 1 || last.Action != "MERGE" {
				t.Fatalf("source %s = %+v", id, s)
			}
		}
	})
	t.Run("contest by a record, any type", func(t *testing.T) {
		target := c.Create(scope, "PLAN_GRAPH", map[string]any{"planGraph": map[string]any{"planId": "p"}}, nil)
		by := c.Create(scope, "SEMANTIC", gqltest.Fact("counter"), nil)
		c.Do(`mutation($id: ID!, $by: String!) { contest(id: $id, contestingRef: $by, actor: "agent-3", rationale: "fails on arm") { status } }`,
			map[string]any{"id": target, "by": by}, nil)
		tg, b := c.get(target), c.get(by)
		if tg.Status != "CONTESTED" || len(tg.ContestedBy) != 1 || tg.ContestedBy[0].ID != by || len(b.Contests) != 1 || b.Contests[0].ID != target {
			t.Fatalf("target = %+v, by = %+v", tg, b)
		}
		if a := tg.AuditLog.Nodes[len(tg.AuditLog.Nodes)-1]; a.Action != "CONTEST" || a.Previous["status"] != "ACTIVE" {
			t.Fatalf("audit = %+v", a)
		}
	})
	t.Run("contest by an external reference", func(t *testing.T) {
		target := c.Create(scope, "SEMANTIC", gqltest.Fact("ext"), nil)
		c.Do(`mutation($id: ID!) { contest(id: $id, contestingRef: "https://tickets.example/T-42", actor: "agent-3") { status } }`, map[string]any{"id": target}, nil)
		tg := c.get(target)
		if tg.Status != "CONTESTED" || !reflect.DeepEqual(tg.ContestEvidence, []string{"https://tickets.example/T-42"}) || len(tg.ContestedBy) != 0 {
			t.Fatalf("target = %+v", tg)
		}
		// A contested record can still be superseded (that resolves the contest).
		c.Do(supersedeQ, map[string]any{"old": target, "in": factInput(scope, "ext2")}, nil)
	})
	t.Run("retract keeps the record and its history", func(t *testing.T) {
		id := c.Create(scope, "WORKING", map[string]any{"working": map[string]any{"threadId": "t", "state": "DONE"}}, nil)
		var out struct{ Retract struct{ Status string } }
		c.Do(retractQ, map[string]any{"id": id}, &out)
		r := c.get(id)
		if out.Retract.Status != "RETRACTED" || r.Status != "RETRACTED" || r.Salience != 0 || len(r.AuditLog.Nodes) != 2 || r.AuditLog.Nodes[1].Action != "RETRACT" {
			t.Fatalf("retracted = %+v", r)
		}
		for _, q := range []string{`mutation($id: ID!) { reinforce(id: $id, actor: "a") { id } }`, `mutation($id: ID!) { contest(id: $id, contestingRef: "x", actor: "a") { id } }`} {
			c.Fail("CONFLICT", q, map[string]any{"id": id})
		}
	})
}

func TestReinforceAndPenalize(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	// A half-life of ~30 years keeps decay between requests below 1e-9.
	id := c.Create(scope, "SEMANTIC", gqltest.Fact("r"), map[string]any{"salience": 0.5,
		"lifecycle": map[string]any{"halfLifeSeconds": 1e9, "minSalience": 0.2}})
	before := c.get(id)
	var out struct{ Reinforce struct{ Salience float64 } }
	c.Do(`mutation($id: ID!) { reinforce(id: $id, actor: "agent-1", rationale: "was useful") { salience } }`, map[string]any{"id": id}, &out)
	if math.Abs(out.Reinforce.Salience-0.6) > 1e-6 {
		t.Fatalf("reinforced salience = %v, want 0.6 (gain 0.1 by default)", out.Reinforce.Salience)
	}
	after := c.get(id)
	if after.Lifecycle.LastReinforcedAt <= before.Lifecycle.LastReinforcedAt {
		t.Fatalf("decay clock not reset: %s -> %s", before.Lifecycle.LastReinforcedAt, after.Lifecycle.LastReinforcedAt)
	}
	for i := 0; i < 6; i++ {
		c.Do(`mutation($id: ID!) { reinforce(id: $id, actor: "agent-1") { salience } }`, map[string]any{"id": id}, &out)
	}
	if out.Reinforce.Salience != 1 {
		t.Fatalf("salience after many reinforcements = %v, want capped at 1", out.Reinforce.Salience)
	}
	var pen struct{ Penalize struct{ Salience float64 } }
	c.Do(`mutation($id: ID!) { penalize(id: $id, amount: 0.3, actor: "agent-1") { salience } }`, map[string]any{"id": id}, &pen)
	if math.Abs(pen.Penalize.Salience-0.7) > 1e-6 {
		t.Fatalf("penalized salience = %v, want 0.7", pen.Penalize.Salience)
	}
	c.Do(`mutation($id: ID!) { penalize(id: $id, amount: 5, actor: "agent-1") { salience } }`, map[string]any{"id": id}, &pen)
	if pen.Penalize.Salience != 0.2 {
		t.Fatalf("salience = %v, want floored at min salience 0.2", pen.Penalize.Salience)
	}
	r := c.get(id)
	last := r.AuditLog.Nodes[len(r.AuditLog.Nodes)-1]
	if last.Action != "PENALIZE" || math.Abs(last.Previous["salience"].(float64)-0.7) > 1e-6 {
		t.Fatalf("penalize audit = %+v", last)
	}
}

func TestAddRelation(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	a := c.Create(scope, "SEMANTIC", gqltest.Fact("a"), nil)
	b := c.Create(scope, "ENTITY", map[string]any{"entity": map[string]any{"canonicalName": "b"}}, nil)
	ep := c.Create(scope, "EPISODIC", map[string]any{"episodic": map[string]any{}}, nil)
	q := `mutation($a: ID!, $p: RelationPredicate!, $b: ID!, $w: Float) { addRelation(sourceId: $a, predicate: $p, targetId: $b, weight: $w, actor: "agent-1") { predicate sourceId targetId weight } }`
	var out struct {
		AddRelation struct{ Predicate, SourceID, TargetID string }
	}
	c.Do(q, map[string]any{"a": a, "p": "ABOUT", "b": b, "w": 0.5}, &out)
	if out.AddRelation.Predicate != "ABOUT" || out.AddRelation.SourceID != a || out.AddRelation.TargetID != b {
		t.Fatalf("relation = %+v", out.AddRelation)
	}
	// A replay (same idempotency key) answers with the stored edge, its
	// instant included, and writes nothing.
	qk := `mutation($a: ID!, $b: ID!, $k: String) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: $b, weight: 0.3, actor: "agent-1", idempotencyKey: $k) { weight createdAt } }`
	key := "rel-" + membrane.NewID()
	var first, again struct {
		AddRelation struct {
			Weight    float64
			CreatedAt string
		}
	}
	c.Do(qk, map[string]any{"a": a, "b": ep, "k": key}, &first)
	c.Do(qk, map[string]any{"a": a, "b": ep, "k": key}, &again)
	if again != first || strings.HasPrefix(first.AddRelation.CreatedAt, "0001") {
		t.Fatalf("replayed relation %+v, first %+v", again, first)
	}
	c.Do(q, map[string]any{"a": a, "p": "ABOUT", "b": b, "w": 0.9}, nil)     // again: updates the weight
	c.Do(q, map[string]any{"a": ep, "p": "MENTIONS", "b": b, "w": nil}, nil) // episodes may mention entities
	var rels struct {
		Record struct {
			Relations struct {
				Edges []struct {
					Direction string
					Node      struct{ ID string }
					Relation  struct {
						Predicate string
						Weight    float64
					}
				}
			}
		}
	}
	c.Do(`query($id: ID!) { record(id: $id) { relations(direction: BOTH) { edges { direction node { id } relation { predicate weight } } } } }`, map[string]any{"id": b}, &rels)
	edges := rels.Record.Relations.Edges
	if len(edges) != 2 {
		t.Fatalf("edges of b = %+v", edges)
	}
	got := map[string]float64{}
	for _, e := range edges {
		if e.Direction != "IN" {
			t.Fatalf("edge %+v should point at b", e)
		}
		got[e.Relation.Predicate+":"+e.Node.ID] = e.Relation.Weight
	}
	if want := map[string]float64{"ABOUT:" + a: 0.9, "MENTIONS:" + ep: 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("relations = %v, want %v", got, want)
	}
	for _, id := range []string{a, b} {
		r := c.get(id)
		if last := r.AuditLog.Nodes[len(r.AuditLog.Nodes)-1]; last.Action != "RELATE" || last.Actor != c.Actor || last.ActorDetail != "agent-1" {
			t.Fatalf("audit of %s = %+v", id, last)
		}
	}
	c.Do(`query($id: ID!) { record(id: $id) { relations(direction: IN) { edges { direction node { id } relation { predicate weight } } } } }`, map[string]any{"id": a}, &rels)
	if len(rels.Record.Relations.Edges) != 0 {
		t.Fatalf("incoming edges of a = %+v", rels.Record.Relations.Edges)
	}
}

// TestConcurrentRevisionsHaveOneWinner races goroutines against the real
// database: of concurrent revisions retiring the same record, exactly one
// succeeds and the others get CONFLICT, every time.
func TestConcurrentRevisionsHaveOneWinner(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	const rounds, racers = 15, 6
	race := func(t *testing.T, id string, mutate func(i int) gqltest.Response) {
		t.Helper()
		var wg sync.WaitGroup
		results := make([]gqltest.Response, racers)
		start := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = mutate(i)
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, r := range results {
			if len(r.Errors) == 0 {
				wins++
			} else if code := r.Errors[0].Extensions["code"]; code != "CONFLICT" {
				t.Fatalf("loser got %v: %s", code, r.Errors[0].Message)
			}
		}
		if wins != 1 {
			t.Fatalf("record %s: %d winners, want exactly 1", id, wins)
		}
		// Retired by whichever won: a supersede or a retraction.
		if r := c.get(id); (r.Status != "RETRACTED" && r.Status != "SUPERSEDED") || len(r.AuditLog.Nodes) != 2 {
			t.Fatalf("record %s after the race: %+v", id, r)
		}
	}
	t.Run("supersede", func(t *testing.T) {
		for range rounds {
			old := c.Create(scope, "SEMANTIC", gqltest.Fact("race"), nil)
			race(t, old, func(i int) gqltest.Response {
				return c.Raw(supersedeQ, map[string]any{"old": old, "in": factInput(scope, fmt.Sprint("winner-", i))})
			})
			var chk struct {
				Record struct {
					Relations struct{ Edges []any }
				}
			}
			c.Do(`query($id: ID!) { record(id: $id) { relations(direction: IN, predicates: [SUPERSEDES]) { edges { cursor } } } }`, map[string]any{"id": old}, &chk)
			if n := len(chk.Record.Relations.Edges); n != 1 {
				t.Fatalf("record %s has %d successors, want 1", old, n)
			}
		}
	})
	t.Run("retract", func(t *testing.T) {
		for range rounds {
			id := c.Create(scope, "SEMANTIC", gqltest.Fact("race"), nil)
			race(t, id, func(int) gqltest.Response { return c.Raw(retractQ, map[string]any{"id": id}) })
		}
	})
	t.Run("merge", func(t *testing.T) {
		for range rounds {
			shared := c.Create(scope, "SEMANTIC", gqltest.Fact("shared"), nil)
			others := make([]string, racers)
			for i := range others {
				others[i] = c.Create(scope, "SEMANTIC", gqltest.Fact("other"), nil)
			}
			race(t, shared, func(i int) gqltest.Response {
				return c.Raw(mergeQ, map[string]any{"ids": []any{others[i], shared}, "in": factInput(scope, "merged")})
			})
		}
	})
	t.Run("supersede against retract", func(t *testing.T) {
		for range rounds {
			id := c.Create(scope, "SEMANTIC", gqltest.Fact("race"), nil)
			race(t, id, func(i int) gqltest.Response {
				if i%2 == 0 {
					return c.Raw(retractQ, map[string]any{"id": id})
				}
				return c.Raw(supersedeQ, map[string]any{"old": id, "in": factInput(scope, "w")})
			})
		}
	})
}

func TestIdempotencyKeys(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	key := "key-" + membrane.NewID()
	old := c.Create(scope, "SEMANTIC", gqltest.Fact("idem"), nil)
	vars := map[string]any{"old": old, "in": factInput(scope, "idem2"), "k": key}
	var first, second struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, vars, &first)
	snap := c.snapshot(scope)
	c.Do(supersedeQ, vars, &second)
	if second.Supersede.ID != first.Supersede.ID {
		t.Fatalf("retry returned %s, want the first result %s", second.Supersede.ID, first.Supersede.ID)
	}
	if after := c.snapshot(scope); after != snap {
		t.Fatal("a retried mutation changed the database")
	}
	errs := c.Fail("CONFLICT", supersedeQ, map[string]any{"old": old, "in": factInput(scope, "different"), "k": key})
	// Keys are stored namespaced by principal; that never shows.
	if strings.Contains(errs[0].Message, "\x00") || strings.Contains(errs[0].Message, c.Actor) {
		t.Fatalf("conflict message shows the stored key: %q", errs[0].Message)
	}

	// Concurrent retries of one keyed mutation all answer with the one
	// result it wrote once.
	s2 := neo4jtest.Scope(t)
	old2 := c.Create(scope, "SEMANTIC", gqltest.Fact("idem-race"), nil)
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		check func(t *testing.T)
	}{
		{"ingest", `mutation($s: String, $k: String) { ingestEvent(input: {source: "a", eventKind: "k", ref: "r", scope: $s}, idempotencyKey: $k) { id } }`,
			map[string]any{"s": s2, "k": "key-" + membrane.NewID()},
			func(t *testing.T) {
				if n := c.Count(s2); n != 1 {
					t.Fatalf("records = %d, want 1", n)
				}
			}},
		{"supersede", supersedeQ, map[string]any{"old": old2, "in": factInput(scope, "idem-race-next"), "k": "key-" + membrane.NewID()},
			func(t *testing.T) {
				if r := c.get(old2); r.Status != "SUPERSEDED" || len(r.AuditLog.Nodes) != 2 {
					t.Fatalf("record %s after the retries: %+v", old2, r)
				}
			}},
	} {
		t.Run("concurrent retries of one "+tc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			ids := make([]string, 6)
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp := c.Raw(tc.query, tc.vars)
					if len(resp.Errors) > 0 {
						t.Errorf("retry failed: %+v", resp.Errors)
						return
					}
					var out map[string]struct{ ID string }
					_ = json.Unmarshal(resp.Data, &out)
					for _, r := range out {
						ids[i] = r.ID
					}
				}()
			}
			wg.Wait()
			for _, id := range ids {
				if id == "" || id != ids[0] {
					t.Fatalf("retries returned different records: %v", ids)
				}
			}
			tc.check(t)
		})
	}
}

func TestLineageFieldsAreBatched(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	in := make([]any, 100)
	for i := range in {
		in[i] = factInput(scope, fmt.Sprint("n", i))
	}
	var created struct{ IngestBatch []struct{ ID string } }
	c.Do(`mutation($in: [RecordInput!]!) { ingestBatch(inputs: $in) { id } }`, map[string]any{"in": in}, &created)
	for _, r := range created.IngestBatch[:10] {
		c.Do(supersedeQ, map[string]any{"old": r.ID, "in": factInput(scope, "next")}, nil)
	}
	before := c.DB.TxCount()
	var out struct {
		Records struct {
			Nodes []struct {
				SupersededBy *struct{ ID string }
				AuditLog     struct{ Nodes []struct{ Action string } }
			}
		}
	}
	c.Do(`query($s: [String!]) { records(filter: {scopes: $s, statuses: [SUPERSEDED, ACTIVE]}, first: 120) {
	  nodes { supersededBy { id } auditLog { nodes { action } } derivatives { id } history { id } current { id } } } }`, map[string]any{"s": []any{scope}}, &out)
	// records, supersededBy, auditLog, derivatives, and history with
	// current (one chain query for both).
	if n := c.DB.TxCount() - before; n > 5 {
		t.Fatalf("%d transactions for 110 records with 5 nested fields, want at most 5", n)
	}
	withSuccessor := 0
	for _, n := range out.Records.Nodes {
		if n.SupersededBy != nil {
			withSuccessor++
		}
	}
	if len(out.Records.Nodes) != 110 || withSuccessor != 10 {
		t.Fatalf("nodes = %d, superseded = %d", len(out.Records.Nodes), withSuccessor)
	}

	// One record: history and current share its chain's one load too.
	old := created.IngestBatch[0].ID
	before = c.DB.TxCount()
	var one struct {
		Record struct {
			History []struct{ ID string }
			Current struct{ ID string }
		}
	}
	c.Do(`query($id: ID!) { record(id: $id) { history { id } current { id } } }`, map[string]any{"id": old}, &one)
	if n := c.DB.TxCount() - before; n != 2 {
		t.Errorf("%d transactions for a record's history and current, want 2 (the record, its chain)", n)
	}
	if h := one.Record.History; len(h) != 2 || h[0].ID != old || one.Record.Current.ID != h[1].ID {
		t.Errorf("history %v, current %v: want the record, then its successor, which is current", h, one.Record.Current)
	}
}

func TestLineageAndTimeTravel(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	// v1 <- v2 <- v3 (supersede chain), v2 forked into f, f merged with g into m.
	v1 := c.Create(scope, "SEMANTIC", gqltest.Fact("v1"), nil)
	tBeforeRevisions := time.Now().UTC()
	var o struct{ Supersede struct{ ID string } }
	c.Do(supersedeQ, map[string]any{"old": v1, "in": factInput(scope, "v2")}, &o)
	v2 := o.Supersede.ID
	tAfterFirst := time.Now().UTC()
	c.Do(supersedeQ, map[string]any{"old": v2, "in": factInput(scope, "v3")}, &o)
	v3 := o.Supersede.ID
	var fk struct{ Fork struct{ ID string } }
	c.Do(`mutation($id: ID!, $in: RecordInput!) { fork(sourceId: $id, newRecord: $in, actor: "a") { id } }`, map[string]any{"id": v3, "in": factInput(scope, "f")}, &fk)
	g := c.Create(scope, "SEMANTIC", gqltest.Fact("g"), nil)
	var mg struct{ Merge struct{ ID string } }
	c.Do(mergeQ, map[string]any{"ids": []any{fk.Fork.ID, g}, "in": factInput(scope, "m")}, &mg)

	type lin struct {
		Lineage struct {
			Nodes []struct {
				Depth  int
				Record struct{ ID, Status string }
			}
			Edges     []struct{ Predicate, SourceID, TargetID string }
			Truncated bool
		}
	}
	lq := `query($id: ID!, $d: LineageDirection, $max: Int, $lim: Int, $asOf: DateTime) { lineage(id: $id, direction: $d, maxDepth: $max, limit: $lim, asOf: $asOf) {
	  nodes { depth record { id status } } edges { predicate sourceId targetId } truncated } }`
	depths := func(l lin) map[string]int {
		out := map[string]int{}
		for _, n := range l.Lineage.Nodes {
			out[n.Record.ID] = n.Depth
		}
		return out
	}
	t.Run("ancestors", func(t *testing.T) {
		var l lin
		c.Do(lq, map[string]any{"id": mg.Merge.ID}, &l)
		want := map[string]int{mg.Merge.ID: 0, fk.Fork.ID: 1, g: 1, v3: 2, v2: 3, v1: 4}
		if got := depths(l); !reflect.DeepEqual(got, want) {
			t.Fatalf("depths = %v, want %v", got, want)
		}
		if len(l.Lineage.Edges) != 5 || l.Lineage.Truncated {
			t.Fatalf("edges = %+v truncated = %v", l.Lineage.Edges, l.Lineage.Truncated)
		}
	})
	t.Run("descendants", func(t *testing.T) {
		var l lin
		c.Do(lq, map[string]any{"id": v1, "d": "DESCENDANTS"}, &l)
		want := map[string]int{v1: 0, v2: 1, v3: 2, fk.Fork.ID: 3, mg.Merge.ID: 4}
		if got := depths(l); !reflect.DeepEqual(got, want) {
			t.Fatalf("depths = %v, want %v", got, want)
		}
	})
	t.Run("bounded by depth and limit", func(t *testing.T) {
		var l lin
		c.Do(lq, map[string]any{"id": v1, "d": "DESCENDANTS", "max": 2}, &l)
		if got := depths(l); len(got) != 3 {
			t.Fatalf("maxDepth 2: %v", got)
		}
		c.Do(lq, map[string]any{"id": v1, "d": "BOTH", "lim": 2}, &l)
		if len(l.Lineage.Nodes) != 3 || !l.Lineage.Truncated {
			t.Fatalf("limit 2: %+v", l.Lineage)
		}
		c.Fail("BAD_USER_INPUT", lq, map[string]any{"id": v1, "max": 101})
		c.Fail("BAD_USER_INPUT", lq, map[string]any{"id": v1, "lim": 1001})
		c.Fail("NOT_FOUND", lq, map[string]any{"id": "missing-" + scope})
	})
	t.Run("asOf", func(t *testing.T) {
		var r struct {
			Record struct {
				Status       string
				Version      int
				Salience     float64
				SupersededBy *struct{ ID string }
				History      []struct{ ID string }
			}
		}
		q := `query($id: ID!, $at: DateTime) { record(id: $id, asOf: $at) { status version salience supersededBy { id } history { id } } }`
		c.Do(q, map[string]any{"id": v1, "at": tBeforeRevisions}, &r)
		// The version as of then, not the current one (issue 12).
		if r.Record.Status != "ACTIVE" || r.Record.Version != 1 || math.Abs(r.Record.Salience-1) > 1e-6 || r.Record.SupersededBy != nil || len(r.Record.History) != 1 {
			t.Fatalf("v1 before revisions = %+v", r.Record)
		}
		c.Do(q, map[string]any{"id": v1, "at": tAfterFirst}, &r)
		if r.Record.Status != "SUPERSEDED" || r.Record.Version != 2 || r.Record.SupersededBy == nil || r.Record.SupersededBy.ID != v2 || len(r.Record.History) != 2 {
			t.Fatalf("v1 after the first supersede = %+v", r.Record)
		}
		c.Do(q, map[string]any{"id": v2, "at": tAfterFirst}, &r)
		if r.Record.Status != "ACTIVE" {
			t.Fatalf("v2 was active then: %+v", r.Record)
		}
		c.Fail("NOT_FOUND", q, map[string]any{"id": v3, "at": tAfterFirst})

		var list struct {
			Records struct {
				Nodes []struct {
					ID, Status string
					Salience   float64
				}
				TotalCount int
			}
		}
		rq := `query($s: [String!], $st: [RevisionStatus!], $at: DateTime) { records(filter: {scopes: $s, statuses: $st}, asOf: $at, first: 50) { nodes { id status salience } totalCount } }`
		c.Do(rq, map[string]any{"s": []any{scope}, "st": []any{"ACTIVE"}, "at": tAfterFirst}, &list)
		if len(list.Records.Nodes) != 1 || list.Records.Nodes[0].ID != v2 || list.Records.TotalCount != 1 {
			t.Fatalf("active records as of after the first supersede = %+v", list.Records)
		}
		c.Do(rq, map[string]any{"s": []any{scope}, "st": []any{"ACTIVE"}, "at": tBeforeRevisions}, &list)
		if len(list.Records.Nodes) != 1 || list.Records.Nodes[0].ID != v1 || math.Abs(list.Records.Nodes[0].Salience-1) > 1e-6 {
			t.Fatalf("active records before the revisions = %+v", list.Records)
		}
		c.Do(rq, map[string]any{"s": []any{scope}, "st": []any{"SUPERSEDED"}, "at": tAfterFirst}, &list)
		if len(list.Records.Nodes) != 1 || list.Records.Nodes[0].ID != v1 || list.Records.Nodes[0].Salience != 0 {
			t.Fatalf("retracted records as of after the first supersede = %+v", list.Records)
		}
		var l lin
		c.Do(lq, map[string]any{"id": v1, "d": "DESCENDANTS", "asOf": tAfterFirst}, &l)
		got := map[string]string{}
		for _, n := range l.Lineage.Nodes {
			got[n.Record.ID] = n.Record.Status
		}
		if !reflect.DeepEqual(got, map[string]string{v1: "SUPERSEDED", v2: "ACTIVE"}) {
			t.Fatalf("lineage as of then = %v", got)
		}
	})
}

// TestAsOfSalienceDecays: salience as of an instant is the decayed value
// then, from the base and anchor in force then, whatever sweeps wrote since.
func TestAsOfSalienceDecays(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	id := c.Create(scope, "SEMANTIC", gqltest.Fact("decaying"), map[string]any{"lifecycle": map[string]any{"halfLifeSeconds": 3600}})
	created := c.get(id)
	t0, err := time.Parse(time.RFC3339Nano, created.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	salienceAt := func(at time.Time) float64 {
		t.Helper()
		var out struct{ Record struct{ Salience float64 } }
		c.Do(`query($id: ID!, $at: DateTime) { record(id: $id, asOf: $at) { salience } }`, map[string]any{"id": id, "at": at.Format(time.RFC3339Nano)}, &out)
		return out.Record.Salience
	}
	if got := salienceAt(t0.Add(time.Hour)); math.Abs(got-0.5) > 1e-9 {
		t.Fatalf("one half-life after creation: %v, want 0.5", got)
	}
	var pen struct{ Penalize struct{ Salience float64 } }
	c.Do(`mutation($id: ID!) { penalize(id: $id, amount: 0.5) { salience } }`, map[string]any{"id": id}, &pen)
	t1, _ := time.Parse(time.RFC3339Nano, c.get(id).Lifecycle.LastReinforcedAt)
	want := math.Exp2(-t1.Add(-time.Microsecond).Sub(t0).Seconds() / 3600)
	if got := salienceAt(t1.Add(-time.Microsecond)); math.Abs(got-want) > 1e-9 {
		t.Fatalf("just before the penalty: %v, want %v", got, want)
	}
	if got, want := salienceAt(t1.Add(time.Hour)), pen.Penalize.Salience/2; math.Abs(got-want) > 1e-9 {
		t.Fatalf("one half-life after the penalty: %v, want %v", got, want)
	}
}

// TestRelationsPages: a record's relations page by first and after, oldest
// edge first: hasNextPage while more follow, start and end cursors of the
// page's first and last edges, and the next page starts after the end
// cursor.
func TestRelationsPages(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	hub := c.Create(scope, "SEMANTIC", gqltest.Fact("hub"), nil)
	var want []string
	for i := range 5 {
		other := c.Create(scope, "SEMANTIC", gqltest.Fact(fmt.Sprintf("leaf %d", i)), nil)
		c.Do(`mutation($a: ID!, $b: ID!) { addRelation(sourceId: $a, predicate: SUPPORTS, targetId: $b) { predicate } }`,
			map[string]any{"a": hub, "b": other}, nil)
		want = append(want, other)
	}
	type page struct {
		Edges []struct {
			Cursor    string
			Direction string
			Node      struct{ ID string }
		}
		PageInfo struct {
			HasNextPage            bool
			StartCursor, EndCursor *string
		}
	}
	q := `query($id: ID!, $after: String) { record(id: $id) { relations(first: 2, after: $after) {
	  edges { cursor direction node { id } } pageInfo { hasNextPage startCursor endCursor } } } }`
	var got []string
	var after any
	for n := 0; ; n++ {
		var out struct{ Record struct{ Relations page } }
		c.Do(q, map[string]any{"id": hub, "after": after}, &out)
		p := out.Record.Relations
		if n > 3 || len(p.Edges) == 0 || len(p.Edges) > 2 {
			t.Fatalf("page %d: %+v", n, p)
		}
		if p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Edges[0].Cursor ||
			p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor {
			t.Fatalf("page %d: cursors %+v of edges %+v", n, p.PageInfo, p.Edges)
		}
		for _, e := range p.Edges {
			if e.Direction != "OUT" {
				t.Fatalf("page %d: edge %+v, want OUT", n, e)
			}
			got = append(got, e.Node.ID)
		}
		if p.PageInfo.HasNextPage != (len(got) < len(want)) {
			t.Fatalf("page %d: hasNextPage %v with %d of %d edges read", n, p.PageInfo.HasNextPage, len(got), len(want))
		}
		if !p.PageInfo.HasNextPage {
			break
		}
		after = *p.PageInfo.EndCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("relations %v, want %v (oldest first)", got, want)
	}
	// A leaf sees the hub's edge, incoming; a record without relations
	// gets an empty page.
	var out struct{ Record struct{ Relations page } }
	c.Do(q, map[string]any{"id": want[0], "after": nil}, &out)
	if p := out.Record.Relations; len(p.Edges) != 1 || p.Edges[0].Direction != "IN" || p.Edges[0].Node.ID != hub {
		t.Fatalf("leaf relations %+v, want the hub's edge, IN", p)
	}
	lone := c.Create(scope, "SEMANTIC", gqltest.Fact("lone"), nil)
	out.Record.Relations = page{}
	c.Do(q, map[string]any{"id": lone, "after": nil}, &out)
	if p := out.Record.Relations; len(p.Edges) != 0 || p.PageInfo.HasNextPage || p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil {
		t.Fatalf("lone relations %+v, want an empty page", p)
	}
}
