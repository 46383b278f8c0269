// Every internal node kind also carries the label Bookkeeping, so that
// analysts in Neo4j Browser can leave them out with one predicate
// (WHERE NOT n:Bookkeeping) and the stylesheet dims them. Writes add the
// label when they create such a node; this labels the ones written before.
// Migrate runs it once and then records the Migration bookkeeping_labels;
// idempotent.
MATCH (n)
WHERE (n:AuditSequence OR n:EntityLock OR n:SessionLock OR n:JobLease OR n:JobRun OR n:Migration
       OR n:IdempotencyKey OR n:DeletedRecordId OR n:SealKey OR n:SealedCount OR n:MemoryVector)
  AND NOT n:Bookkeeping
CALL (n) {
  SET n:Bookkeeping
} IN TRANSACTIONS OF 10000 ROWS
