package neo4j_test

import (
	"context"
	"strings"
	"testing"

	"github.com/membrane/membrane/internal/membrane"
	"github.com/membrane/membrane/internal/neo4j"
	"github.com/membrane/membrane/internal/neo4jtest"
)

// schemaAt returns the id of a MembraneSchema node of the test's own that
// records version (none at all for 0), deleted when the test ends: with
// neo4j.SetSchemaNode, a store reads its version there instead of on the
// node every other package's start reads.
func schemaAt(t *testing.T, version int) string {
	t.Helper()
	id := "test-" + membrane.NewID()
	t.Cleanup(func() {
		raw(t, `MATCH (s:MembraneSchema {id: $id}) DETACH DELETE s`, map[string]any{"id": id})
	})
	if version > 0 {
		raw(t, `CREATE (s:MembraneSchema:Bookkeeping {id: $id, version: $v})`, map[string]any{"id": id, "v": int64(version)})
	}
	return id
}

// schemaVersionOf is the version the MembraneSchema node id records (nil:
// no node, or none recorded).
func schemaVersionOf(t *testing.T, id string) any {
	t.Helper()
	rows := rawRows(t, `OPTIONAL MATCH (s:MembraneSchema {id: $id}) RETURN s.version AS v`, map[string]any{"id": id})
	return rows[0]["v"]
}

// TestStart: what a start does with the schema version a database holds.
// An empty database gets the schema and the current version; one at the
// current version starts; an older one is refused with a message naming
// membrane migrate, or migrated when the start may migrate; a newer one is
// refused either way, and by Migrate too.
func TestStart(t *testing.T) {
	neo4jtest.DB(t)
	tests := []struct {
		name    string
		version int  // recorded before the start (0: none)
		data    bool // the database holds a record
		migrate bool
		code    string // the refusal's error code ("": none)
		says    string // and what its message says
		want    any    // the version recorded after the start
	}{
		{name: "empty", want: int64(neo4j.SchemaVersion)},
		{name: "empty, may migrate", migrate: true, want: int64(neo4j.SchemaVersion)},
		{name: "current", version: neo4j.SchemaVersion, data: true, want: int64(neo4j.SchemaVersion)},
		{name: "older", data: true, code: membrane.EPRECONDITION, says: "run `membrane migrate`", want: nil},
		{name: "older, may migrate", data: true, migrate: true, want: int64(neo4j.SchemaVersion)},
		{name: "newer", version: neo4j.SchemaVersion + 1, data: true, code: membrane.EPRECONDITION, says: "newer than this server's", want: int64(neo4j.SchemaVersion + 1)},
		{name: "newer, may migrate", version: neo4j.SchemaVersion + 1, migrate: true, code: membrane.EPRECONDITION, says: "newer than this server's", want: int64(neo4j.SchemaVersion + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scope := neo4jtest.Scope(t)
			if tt.data {
				neo4jtest.Create(t, neo4jtest.DB(t), t0, fact(scope, "lighthouse", 0.5, nil))
			}
			node := schemaAt(t, tt.version)
			db := neo4jtest.Open(t)
			neo4j.SetSchemaNode(db, node, []string{scope})
			err := db.Start(t.Context(), tt.migrate)
			if membrane.ErrorCode(err) != tt.code || (tt.code != "" && !strings.Contains(err.Error(), tt.says)) {
				t.Fatalf("start: %v, want code %q saying %q", err, tt.code, tt.says)
			}
			if got := schemaVersionOf(t, node); got != tt.want {
				t.Fatalf("version %v recorded, want %v", got, tt.want)
			}
			if tt.version > neo4j.SchemaVersion {
				if _, err := db.Migrate(context.Background()); membrane.ErrorCode(err) != membrane.EPRECONDITION {
					t.Fatalf("migrate over a newer database: %v, want a refusal", err)
				}
			}
		})
	}
	// The schema a start applies is there, the version's constraint with it.
	if rows := rawRows(t, `SHOW CONSTRAINTS YIELD name WHERE name IN ['membrane_schema_id', 'memory_id'] RETURN count(*) AS n`, nil); rows[0]["n"] != int64(2) {
		t.Fatalf("%v of the schema's constraints, want 2", rows[0]["n"])
	}
}

// TestStartScansNoData: a start over a database at the current version
// runs as many transactions however many records it holds, and leaves
// alone a record lacking what Migrate's re-index gives (its search terms
// of the current analysis).
func TestStartScansNoData(t *testing.T) {
	neo4jtest.DB(t)
	scope := neo4jtest.Scope(t)
	node := schemaAt(t, neo4j.SchemaVersion)
	db := neo4jtest.Open(t)
	neo4j.SetSchemaNode(db, node, []string{scope})
	txs := func() int64 {
		before := db.TxCount()
		if err := db.Start(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		return db.TxCount() - before
	}
	stale := neo4jtest.Create(t, db, t0, fact(scope, "lighthouse", 0.5, nil))[0]
	raw(t, `MATCH (m:Memory {id: $id}) REMOVE m.searchTerms, m.searchTermsVersion`, map[string]any{"id": stale.ID})
	few := txs()
	ins := make([]membrane.RecordInput, 200)
	for i := range ins {
		ins[i] = fact(scope, "harbour wall", 0.5, nil)
	}
	neo4jtest.Create(t, db, t0, ins...)
	if many := txs(); many != few {
		t.Errorf("a start ran %d transactions over 1 record and %d over 201", few, many)
	}
	if p := nodeProps(t, stale.ID); p["searchTermsVersion"] != nil || p["searchTerms"] != nil {
		t.Errorf("a start re-indexed a record: %v", p)
	}
}
