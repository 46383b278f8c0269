// Records that the data migration $name ran with the keys $keys (their
// check values, KeyCheck: a fingerprint of the key, not its id, so that a
// start with wrong material under the right id does not count as having
// tried the right key) and skipped $skipped records it could not open: a
// later start runs it again only with a key not among these
// (migrationDue), so that a server missing a key does not rescan the
// database at every start. The keys are merged with those recorded
// before, so replicas with different key sets do not make each other
// rescan; the first SET takes the node's write lock, so two replicas
// finishing at once do not lose each other's keys.
MERGE (m:Migration {name: $name})
ON CREATE SET m:Bookkeeping
SET m.at = $now
WITH m
SET m.skipped = $skipped,
    m.triedKeys = coalesce(m.triedKeys, []) + [k IN $keys WHERE NOT k IN coalesce(m.triedKeys, [])]
