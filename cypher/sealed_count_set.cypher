// Stores a count of sealed records by key id ($keyIds, $counts, parallel
// lists) and the check values of the keys of the server that counted
// ($checks), so that the next start with the same keys reads it instead of
// scanning every record (countUnreadable).
MERGE (c:SealedCount {name: 'sealed_records'})
ON CREATE SET c:Bookkeeping
SET c.keyIds = $keyIds, c.counts = $counts, c.checks = $checks, c.at = $now
