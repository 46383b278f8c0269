package neo4j

// CommitUncertain exposes commitUncertain to the external tests, which
// classify real driver errors with it.
var CommitUncertain = commitUncertain
