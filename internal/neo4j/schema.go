package neo4j

import (
	"context"
	"fmt"

	"github.com/membrane/membrane/cypher"
	"github.com/membrane/membrane/internal/membrane"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// SchemaVersion is the version of the data layout this binary reads and
// writes, recorded in the database on the MembraneSchema node. Raise it
// with every change that data already stored must follow: a constraint or
// an index (cypher/schema.cypher), a new membrane.AnalysisVersion (Migrate
// re-indexes the search terms), a property every record must have (with
// the pass that gives it to them, in Migrate). A start refuses a database
// of another version; Migrate brings an older one to this version.
const SchemaVersion = 1

// schemaNodeID is the id of the MembraneSchema node; tests use others.
const schemaNodeID = "membrane"

// MigrateResult is what Migrate did.
type MigrateResult struct {
	// From is the version the database held (0: none recorded), To the
	// version it holds now (SchemaVersion).
	From, To int
	// Terms records got the search terms of the current analysis.
	Terms int
	// Blind sealed records got current blind terms; BlindSkipped did not
	// open (sealed under a key this server lacks): they are not found by
	// text until Migrate runs with their key.
	Blind, BlindSkipped int
}

// Start prepares the database for this server without reading its data:
// an empty database gets the schema (constraints and indexes) and
// SchemaVersion; one at SchemaVersion gets the schema again (idempotent,
// so a lost index comes back); an older one is migrated (Migrate) when
// migrate is set, and refused otherwise, with an EPRECONDITION naming
// `membrane migrate`; a newer one is always refused. It then checks this
// server's encryption keys against those recorded (ChangedKeys) and reads
// the stored count of sealed records it cannot open (Unreadable).
func (db *DB) Start(ctx context.Context, migrate bool) error {
	version, used, err := db.schemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	switch {
	case version > SchemaVersion:
		return newerSchema(version)
	case version == SchemaVersion, version == 0 && !used:
		if err := db.applySchema(ctx); err != nil {
			return err
		}
		if version == 0 {
			if err := db.setSchemaVersion(ctx); err != nil {
				return err
			}
		}
	case !migrate:
		return membrane.Errorf(membrane.EPRECONDITION, "the database holds schema version %d and this server needs version %d: "+
			"run `membrane migrate` with this server's configuration to upgrade it (or set migrate_at_start, MEMBRANE_MIGRATE_AT_START=true)",
			version, SchemaVersion)
	default:
		if _, err := db.Migrate(ctx); err != nil {
			return err
		}
		return nil // Migrate checked the keys and counted
	}
	if err := db.checkKeys(ctx); err != nil {
		return fmt.Errorf("check encryption keys: %w", err)
	}
	db.failed = nil
	return db.countUnreadable(ctx, false)
}

// Migrate brings the database to SchemaVersion: it applies the schema,
// re-indexes the records whose search terms or blind terms an earlier text
// analysis computed, counts the sealed records by key id (Unreadable), and
// records SchemaVersion. It reads every record, so only `membrane migrate`
// runs it (or a start with migrate_at_start, on an older database). It is
// idempotent: run again, it rewrites nothing; run with a key it lacked
// before, it re-indexes the records that key sealed. A database of a newer
// version is refused.
func (db *DB) Migrate(ctx context.Context) (MigrateResult, error) {
	res := MigrateResult{To: SchemaVersion}
	version, _, err := db.schemaVersion(ctx)
	if err != nil {
		return res, fmt.Errorf("read the schema version: %w", err)
	}
	if version > SchemaVersion {
		return res, newerSchema(version)
	}
	res.From = version
	if err := db.applySchema(ctx); err != nil {
		return res, err
	}
	if res.Terms, err = db.reindexTerms(ctx); err != nil {
		return res, fmt.Errorf("re-index search terms: %w", err)
	}
	db.failed = nil
	if res.Blind, res.BlindSkipped, err = db.reindexBlind(ctx, nil); err != nil {
		return res, fmt.Errorf("re-index blind terms: %w", err)
	}
	if err := db.checkKeys(ctx); err != nil {
		return res, fmt.Errorf("check encryption keys: %w", err)
	}
	if err := db.countUnreadable(ctx, true); err != nil {
		return res, err
	}
	return res, db.setSchemaVersion(ctx)
}

// newerSchema refuses a database a newer binary migrated: this one would
// write data that version does not expect.
func newerSchema(version int) error {
	return membrane.Errorf(membrane.EPRECONDITION, "the database holds schema version %d, newer than this server's %d: "+
		"a newer Membrane migrated it; run that version or a later one", version, SchemaVersion)
}

// applySchema applies cypher/schema.cypher (idempotent) and waits for the
// indexes to come online.
func (db *DB) applySchema(ctx context.Context) error {
	for _, stmt := range cypher.Statements("schema") {
		if err := db.schemaStatement(ctx, stmt); err != nil {
			return fmt.Errorf("apply schema: %w", err)
		}
	}
	if err := db.schemaStatement(ctx, cypher.Must("await_indexes")); err != nil {
		return fmt.Errorf("await indexes: %w", err)
	}
	return nil
}

// schemaVersion returns the schema version the database records (0: none,
// schema_version) and whether it holds data (schema_data).
func (db *DB) schemaVersion(ctx context.Context) (version int, used bool, err error) {
	type out struct {
		version int
		used    bool
	}
	o, err := read(ctx, db, func(tx neo4j.ManagedTransaction) (out, error) {
		var o out
		row, err := single(ctx, tx, cypher.Must("schema_version"), map[string]any{"node": db.schemaNode})
		if err != nil {
			return o, err
		}
		if row != nil {
			v, _ := row.Values[0].(int64)
			o.version = int(v)
		}
		row, err = single(ctx, tx, cypher.Must("schema_data"), map[string]any{"scopes": scopesOrNil(db.dataScopes)})
		o.used = row != nil
		return o, err
	})
	return o.version, o.used, err
}

// setSchemaVersion records SchemaVersion (schema_version_set).
func (db *DB) setSchemaVersion(ctx context.Context) error {
	_, err := write(ctx, db, func(tx neo4j.ManagedTransaction) (struct{}, error) {
		_, err := single(ctx, tx, cypher.Must("schema_version_set"), map[string]any{
			"node": db.schemaNode, "version": int64(SchemaVersion), "now": db.Now().UTC()})
		return struct{}{}, err
	})
	if err != nil {
		return fmt.Errorf("record the schema version: %w", err)
	}
	return nil
}
