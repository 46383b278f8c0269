package graph_test

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// analysisFixture stores one record of each kind whose words are only
// found through text analysis (stems, identifiers, payload fields other
// than the summary) and returns their ids by key.
func analysisFixture(t *testing.T, c *client, scope string) map[string]string {
	t.Helper()
	now := time.Now().UTC()
	outcome := membrane.OutcomeSuccess
	inputs := map[string]membrane.RecordInput{
		"fact-db": {Type: membrane.TypeSemantic, Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{
			Subject: "auth-service", Predicate: "uses_database", Object: "PostgreSQL"}}},
		"fact-owner": {Type: membrane.TypeSemantic, Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{
			Subject: "ledger", Predicate: "owned_by", Object: "finance crew"}}},
		"working": {Type: membrane.TypeWorking, Payload: membrane.PayloadInput{Working: &membrane.WorkingPayload{
			ThreadID: "thread-pg-tuning", State: membrane.TaskExecuting, ContextSummary: "tuning the pool",
			ActiveConstraints: []membrane.Constraint{{Type: "config", Key: "max_connections", Value: 200.0}}}}},
		"episode": {Type: membrane.TypeEpisodic, Payload: membrane.PayloadInput{Episodic: &membrane.EpisodicPayload{
			SessionID: "sess-7q", Outcome: &outcome,
			Timeline:  []membrane.TimelineEvent{{T: now, EventKind: "deploy", Ref: "rollout-4711", Summary: "We migrated the invoices table"}},
			ToolGraph: []membrane.ToolNode{{ID: "n1", Tool: "kubectl", Args: map[string]any{"kube_namespace": "ledgerspace"}}}}}},
		"plan": {Type: membrane.TypePlanGraph, Payload: membrane.PayloadInput{PlanGraph: &membrane.PlanGraphPayload{
			PlanID: "plan-vacuum-nightly", Intent: "keep tables lean", Nodes: []membrane.PlanNode{{ID: "a", Op: "vacuum"}}}}},
		"competence": {Type: membrane.TypeCompetence, Payload: membrane.PayloadInput{Competence: &membrane.CompetencePayload{
			SkillName: "failover", FailureModes: []string{"replication lags too far behind"}, Fallbacks: []string{"page the DBA"},
			Recipe: []membrane.RecipeStep{{Step: "promote the replica", Tool: "patronictl"}}}}},
		"entity": {Type: membrane.TypeEntity, Payload: membrane.PayloadInput{Entity: &membrane.EntityPayload{
			CanonicalName: "Quartermaster", PrimaryType: "service",
			Identifiers: []membrane.EntityIdentifier{{Namespace: "jira", Value: "QM-2041"}}}}},
	}
	ids := map[string]string{}
	var recs []*membrane.Record
	for key, in := range inputs {
		in.Scope = &scope
		r, err := membrane.DefaultPolicy().BuildRecord(in, now)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		r.Lifecycle.BaseSalience = r.Salience
		ids[key] = r.ID
		recs = append(recs, r)
	}
	stored(t, c, recs...)
	return ids
}

// TestRetrieveFindsWhatWasStored: plural and tense variants, identifiers in
// any spelling and every meaningful payload field find their record first.
func TestRetrieveFindsWhatWasStored(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	ids := analysisFixture(t, c, scope)
	for _, tt := range []struct{ query, want string }{
		{"databases", "fact-db"},
		{"uses_database", "fact-db"},
		{"usesDatabase", "fact-db"},
		{"which database does it use", "fact-db"},
		{"postgresql", "fact-db"},
		{"owned_by", "fact-owner"},
		{"who owns the ledger", "fact-owner"},
		{"max_connections", "working"},
		{"maxConnections", "working"},
		{"thread-pg-tuning", "working"},
		{"rollout-4711", "episode"},
		{"invoice migration", "episode"},
		{"sess-7q", "episode"},
		{"kube_namespace", "episode"},
		{"plan-vacuum-nightly", "plan"},
		{"replication lagging", "competence"},
		{"patronictl", "competence"},
		{"qm-2041", "entity"},
		{"Quartermaster services", "entity"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			hits := c.retrieve(map[string]any{"query": tt.query, "scopes": []any{scope}}).Retrieve.Hits
			if len(hits) == 0 || hits[0].Record.ID != ids[tt.want] {
				t.Errorf("retrieve(%q) = %v, want %s (%s) first", tt.query, hitIDs(hits), tt.want, ids[tt.want])
			}
		})
	}
}

// TestRetrieveQueryAnalysisBadInput: queries that analyse to nothing, carry
// Lucene syntax, NULs or are too long give an empty result or a coded
// BAD_USER_INPUT on input.query, never INTERNAL, and syntax never changes
// what is searched.
func TestRetrieveQueryAnalysisBadInput(t *testing.T) {
	c := newClient(t)
	scope := neo4jtest.Scope(t)
	ids := analysisFixture(t, c, scope)
	hits := func(q string) []string {
		return hitIDs(c.retrieve(map[string]any{"query": q, "scopes": []any{scope}}).Retrieve.Hits)
	}
	// Without a query retrieval browses the scope; stop words are a query
	// that matches nothing.
	if got := hitIDs(c.retrieve(map[string]any{"scopes": []any{scope}}).Retrieve.Hits); len(got) != len(ids) {
		t.Fatalf("browse = %v, want the %d records", got, len(ids))
	}
	for _, q := range []string{"the of and", "what is it?", "Who were they?"} {
		if got := hits(q); len(got) != 0 {
			t.Errorf("retrieve(%q) = %v, want no hits", q, got)
		}
	}
	// Lucene syntax is separators: the same hits as its words.
	plain := hits("databases tables")
	if len(plain) < 2 {
		t.Fatalf("plain = %v", plain)
	}
	for _, q := range []string{`databases* AND tables~2`, `(databases OR "tables")^9`, `databases:tables`, `+databases -tables`, `databases && !tables`,
		`databases\ tables/ [a TO z] {x}`, "databases\x00tables", "databases\xed\xa0\x80tables"} {
		if got := hits(q); !slices.Equal(got, plain) {
			t.Errorf("retrieve(%q) = %v, want %v", q, got, plain)
		}
	}
	// Words up to the byte limit are searched (the first MaxQueryTerms).
	long := strings.Repeat("databases filler ", membrane.MaxQueryBytes/len("databases filler "))
	if got := hits(long); len(got) == 0 || got[0] != ids["fact-db"] {
		t.Errorf("a long query = %v", got)
	}
	for _, q := range []string{"?!", "\x00", "\xed\xa0\x80", "-- ** ::", strings.Repeat("databases ", 100<<10/10)} {
		errs := c.Fail("BAD_USER_INPUT", retrieveQ, map[string]any{"in": map[string]any{"query": q, "scopes": []any{scope}}})
		if f := fieldsOf(errs); len(f) == 0 || f[0] != "input.query" {
			t.Errorf("retrieve(%.20q): fields %v, want input.query", q, f)
		}
	}
}

// TestRetrieveStopWordsWithVector: a query of only stop words has no
// full-text terms, but with vector search its embedding still searches
// (and the empty full-text part is not sent to the index).
func TestRetrieveStopWordsWithVector(t *testing.T) {
	scope := neo4jtest.Scope(t)
	c := vectorClient(t, new(atomic.Bool))
	rec := c.capture(map[string]any{"source": "s", "scope": scope, "summary": "what was it about"})
	awaitSearch(t, c)
	got := c.retrieve(map[string]any{"query": "what is it", "scopes": []any{scope}}).Retrieve
	if !got.VectorUsed || len(got.Hits) == 0 || got.Hits[0].Record.ID != rec.CaptureMemory.Primary.ID || got.Hits[0].Parts.Text != 0 {
		t.Fatalf("stop words with a vector: %+v", got)
	}
}
