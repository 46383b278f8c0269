package neo4j_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// rawRows runs a statement on the test database directly (with raw) and
// returns its rows as maps.
func rawRows(t *testing.T, stmt string, params map[string]any) []map[string]any {
	t.Helper()
	recs := raw(t, stmt, params)
	out := make([]map[string]any, len(recs))
	for i, r := range recs {
		out[i] = r.AsMap()
	}
	return out
}

// retrieveIDs runs a full-text retrieval of query within scope.
func retrieveIDs(t *testing.T, db *neo4j.DB, scope, query string) []string {
	t.Helper()
	q, err := membrane.NewRetrieveQuery(&query, nil, []string{scope}, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AwaitSearchIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := db.Retrieve(sysCtx(), q, membrane.DefaultSelectionThreshold)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.ID)
	}
	return out
}

// TestMigrateReindex: records whose search terms (and blind terms) are
// missing or an earlier analysis computed, in a database of an older
// schema version: a start refuses it, naming membrane migrate, and leaves
// the records alone; two replicas running Migrate together give them their
// terms, found by stemmed and identifier queries (a sealed record by its
// blind terms, with no plaintext terms) and record the current version;
// running it again changes nothing.
func TestMigrateReindex(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	plain := neo4jtest.Create(t, db, t0, membrane.RecordInput{Type: membrane.TypeSemantic, Scope: ptr(scope),
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "auth-service", Predicate: "uses_database", Object: "PostgreSQL",
			Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "t"}}}}})[0]
	sealedIn := fact(scope, "vault databases", 0.5, nil)
	sealedIn.Sensitivity = ptr(membrane.SensitivityHigh)
	sealed := neo4jtest.Create(t, db, t0, sealedIn)[0]
	// A database of this test's own (its records, its schema node) that an
	// older version left: no version recorded, no terms of this analysis.
	node := schemaAt(t, 0)
	store := func() *neo4j.DB {
		s := neo4jtest.Open(t)
		neo4j.SetSchemaNode(s, node, []string{scope})
		return s
	}
	raw(t, `MATCH (m:Memory {scope: $scope})
		REMOVE m.searchTerms, m.searchTermsVersion, m.blindTerms, m.blindKeyId, m.blindTermsVersion`,
		map[string]any{"scope": scope})
	if got := retrieveIDs(t, db, scope, "databases"); len(got) != 0 {
		t.Fatalf("before the migration: %v, want nothing found", got)
	}

	err := store().Start(t.Context(), false)
	if membrane.ErrorCode(err) != membrane.EPRECONDITION || !strings.Contains(err.Error(), "membrane migrate") {
		t.Fatalf("a start over an older database: %v, want a refusal naming membrane migrate", err)
	}
	if got := retrieveIDs(t, db, scope, "databases"); len(got) != 0 {
		t.Fatalf("after a refused start: %v, want nothing found", got)
	}

	// Two replicas migrate together.
	var wg sync.WaitGroup
	results := make([]neo4j.MigrateResult, 2)
	errs := make([]error, 2)
	for i := range errs {
		replica := store()
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = replica.Migrate(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		if results[i].From != 0 || results[i].To != neo4j.SchemaVersion {
			t.Errorf("replica %d migrated from %d to %d, want 0 to %d", i, results[i].From, results[i].To, neo4j.SchemaVersion)
		}
	}

	for _, q := range []string{"postgresql", "auth service"} {
		if got := retrieveIDs(t, db, scope, q); len(got) != 1 || got[0] != plain.ID {
			t.Errorf("retrieve(%q) after the migration = %v, want [%s]", q, got, plain.ID)
		}
	}
	// A query naming a database finds the sealed record too, by its blind
	// terms (docs/security.md).
	for _, q := range []string{"databases", "uses_database", "usesDatabase"} {
		if got := retrieveIDs(t, db, scope, q); !sameIDs(got, plain.ID, sealed.ID) {
			t.Errorf("retrieve(%q) after the migration = %v, want %s and the sealed %s", q, got, plain.ID, sealed.ID)
		}
	}
	props := map[string]map[string]any{}
	for _, row := range rawRows(t, `MATCH (m:Memory {scope: $scope}) RETURN m.id AS id, properties(m) AS p`, map[string]any{"scope": scope}) {
		props[row["id"].(string)] = row["p"].(map[string]any)
	}
	for id, p := range props {
		if p["searchTermsVersion"] != int64(membrane.AnalysisVersion) {
			t.Errorf("%s: searchTermsVersion %v, want %d", id, p["searchTermsVersion"], membrane.AnalysisVersion)
		}
	}
	// The terms after the scope token retrieval restricts its query to.
	if want := membrane.IndexDocument(scope, membrane.SearchTerms(plain.Payload)); props[plain.ID]["searchTerms"] != want {
		t.Errorf("terms = %q, want %q", props[plain.ID]["searchTerms"], want)
	}
	if got := props[sealed.ID]["searchTerms"]; got != "" {
		t.Errorf("sealed record's terms = %q, want none in clear", got)
	}
	if v := schemaVersionOf(t, node); v != int64(neo4j.SchemaVersion) {
		t.Errorf("schema version %v recorded, want %d", v, neo4j.SchemaVersion)
	}

	// Again: nothing to do, nothing changed; and a start now serves.
	res, err := store().Migrate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.From != neo4j.SchemaVersion || res.To != neo4j.SchemaVersion {
		t.Errorf("again: from %d to %d, want %d to %d", res.From, res.To, neo4j.SchemaVersion, neo4j.SchemaVersion)
	}
	if after := rawRows(t, `MATCH (m:Memory {scope: $scope}) RETURN m.id AS id, properties(m) AS p`, map[string]any{"scope": scope}); len(after) != len(props) {
		t.Errorf("%d records after a second run, want %d", len(after), len(props))
	} else {
		for _, row := range after {
			if p := row["p"].(map[string]any); p["searchTerms"] != props[row["id"].(string)]["searchTerms"] || p["blindTerms"] != props[row["id"].(string)]["blindTerms"] {
				t.Errorf("%s changed by a second run", row["id"])
			}
		}
	}
	if got := retrieveIDs(t, db, scope, "databases"); !sameIDs(got, plain.ID, sealed.ID) {
		t.Errorf("after a second run: %v", got)
	}
	if err := store().Start(t.Context(), false); err != nil {
		t.Fatalf("a start after the migration: %v", err)
	}
}

// TestRetrieveQueryAnalysis: in the store, a query of only stop words
// matches nothing (while the scope has records to browse), Lucene syntax
// finds what its words find, and identifiers match across spellings.
func TestRetrieveQueryAnalysis(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	recs := neo4jtest.Create(t, db, t0,
		fact(scope, "the databases of billing", 0.5, nil),
		fact(scope, "cfg.max_connections raised", 0.5, nil))
	browse, err := membrane.NewRetrieveQuery(nil, nil, []string{scope}, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := db.Retrieve(sysCtx(), browse, membrane.DefaultSelectionThreshold); err != nil || len(r.Hits) != 2 {
		t.Fatalf("browse: %v, %v", r, err)
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"what is it?", nil},
		{"the of and to", nil},
		{"database", []string{recs[0].ID}},
		{`database* AND "billing"~2 OR title:(qq)`, []string{recs[0].ID}},
		{"maxConnections", []string{recs[1].ID}},
		{"max-connections", []string{recs[1].ID}},
		{"CFG.MAX_CONNECTIONS", []string{recs[1].ID}},
	} {
		if got := retrieveIDs(t, db, scope, tt.query); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("retrieve(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

// sameIDs reports whether got holds exactly ids, in any order.
func sameIDs(got []string, ids ...string) bool {
	if len(got) != len(ids) {
		return false
	}
	for _, id := range ids {
		if !slices.Contains(got, id) {
			return false
		}
	}
	return true
}
