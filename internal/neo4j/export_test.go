package neo4j

import "context"

// CommitUncertain exposes commitUncertain to the external tests, which
// classify real driver errors with it.
var CommitUncertain = commitUncertain

// MigrateAuditRefsIn runs the audit references migration's pass over the
// entries and records of scopes only (the test database is shared), and
// returns what it migrated and skipped.
func (db *DB) MigrateAuditRefsIn(ctx context.Context, scopes []string) (int, int, error) {
	db.refsMigrated, db.refsSkipped = 0, 0
	err := db.migrateAuditRefs(ctx, scopes)
	return db.refsMigrated, db.refsSkipped, err
}
