// Stores a count of sealed records by key id ($keyIds, $counts, parallel
// lists), taken by Migrate or Reseal, so that a start reads it instead of
// scanning every record (countUnreadable).
MERGE (c:SealedCount {name: 'sealed_records'})
ON CREATE SET c:Bookkeeping
SET c.keyIds = $keyIds, c.counts = $counts, c.at = $now
