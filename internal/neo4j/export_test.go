package neo4j

// CommitUncertain exposes commitUncertain to the external tests, which
// classify real driver errors with it.
var CommitUncertain = commitUncertain

// SetTextMatches sets the most full-text matches a records text filter
// reads (membrane.MaxTextMatches by default), so that a test can reach the
// bound with a few records.
func SetTextMatches(db *DB, n int) { db.textMatches = n }
