package neo4j_test

import (
	"cmp"
	"context"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"

	driver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// rawRows runs a statement on the test database directly and returns its
// rows as maps.
func rawRows(t *testing.T, stmt string, params map[string]any) []map[string]any {
	t.Helper()
	auth := driver.NoAuth()
	if u := os.Getenv("NEO4J_USER"); u != "" {
		auth = driver.BasicAuth(u, os.Getenv("NEO4J_PASSWORD"), "")
	}
	d, err := driver.NewDriverWithContext(os.Getenv("NEO4J_URI"), auth)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	res, err := driver.ExecuteQuery(context.Background(), d, stmt, params, driver.EagerResultTransformer,
		driver.ExecuteQueryWithDatabase(cmp.Or(os.Getenv("NEO4J_DATABASE"), "neo4j")))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(res.Records))
	for i, r := range res.Records {
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

// TestSearchTermsMigration: records an earlier version wrote (a searchText,
// no search terms) get their terms when two replicas start together, and
// are found by stemmed and identifier queries; a sealed record gets no
// plaintext terms; the migration is recorded, and running it again changes
// nothing.
func TestSearchTermsMigration(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	plain := create(t, db, t0, membrane.RecordInput{Type: membrane.TypeSemantic, Scope: ptr(scope),
		Payload: membrane.PayloadInput{Semantic: &membrane.SemanticPayload{Subject: "auth-service", Predicate: "uses_database", Object: "PostgreSQL",
			Evidence: []membrane.EvidenceRef{{SourceType: "test", SourceID: "t"}}}}})[0]
	sealedIn := fact(scope, "vault databases", 0.5, nil)
	sealedIn.Sensitivity = ptr(membrane.SensitivityHigh)
	sealed := create(t, db, t0, sealedIn)[0]

	// The database as the previous version left it: the text copy, no
	// terms (nor blind terms), and the migrations not run.
	raw(t, `MATCH (m:Memory {scope: $scope})
		SET m.searchText = CASE WHEN m.encrypted THEN '' ELSE 'auth-service uses_database PostgreSQL' END
		REMOVE m.searchTerms, m.searchTermsVersion, m.blindTerms, m.blindKeyId, m.blindTermsVersion
		WITH count(*) AS _ OPTIONAL MATCH (g:Migration) WHERE g.name IN [$name, $blind] DELETE g`,
		map[string]any{"scope": scope, "name": neo4j.SearchTermsMigration(), "blind": neo4j.BlindTermsMigration()})
	if got := retrieveIDs(t, db, scope, "databases"); len(got) != 0 {
		t.Fatalf("before the migration: %v, want nothing found", got)
	}

	// Two replicas start together.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		replica := neo4jtest.Open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = replica.Migrate(context.Background())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
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
		if p["searchTermsVersion"] != int64(membrane.AnalysisVersion) || p["searchText"] != nil {
			t.Errorf("%s: searchTermsVersion %v, searchText %v; want %d and none", id, p["searchTermsVersion"], p["searchText"], membrane.AnalysisVersion)
		}
	}
	// The terms after the scope token retrieval restricts its query to.
	if want := membrane.IndexDocument(scope, membrane.SearchTerms(plain.Payload)); props[plain.ID]["searchTerms"] != want {
		t.Errorf("terms = %q, want %q", props[plain.ID]["searchTerms"], want)
	}
	if got := props[sealed.ID]["searchTerms"]; got != "" {
		t.Errorf("sealed record's terms = %q, want none in clear", got)
	}
	if rows := rawRows(t, `MATCH (g:Migration {name: $name}) RETURN count(g) AS n`, map[string]any{"name": neo4j.SearchTermsMigration()}); rows[0]["n"] != int64(1) {
		t.Errorf("migration nodes = %v, want 1", rows[0]["n"])
	}
	if rows := rawRows(t, `SHOW FULLTEXT INDEXES YIELD name WHERE name = 'memory_text' RETURN count(*) AS n`, nil); rows[0]["n"] != int64(0) {
		t.Errorf("memory_text is still there")
	}

	// Again: nothing to do, nothing changed.
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := retrieveIDs(t, db, scope, "databases"); !sameIDs(got, plain.ID, sealed.ID) {
		t.Errorf("after a second start: %v", got)
	}
}

// TestRetrieveQueryAnalysis: in the store, a query of only stop words
// matches nothing (while the scope has records to browse), Lucene syntax
// finds what its words find, and identifiers match across spellings.
func TestRetrieveQueryAnalysis(t *testing.T) {
	db := neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	recs := create(t, db, t0,
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
