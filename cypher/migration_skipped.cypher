// Records that the data migration $name ran with the key ids $keys and
// skipped $skipped records it could not open: a later start runs it again
// only with a key not among these (migrationDue), so that a server missing
// a key does not rescan the database at every start.
MERGE (m:Migration {name: $name})
SET m.at = $now, m.skipped = $skipped, m.triedKeys = $keys
