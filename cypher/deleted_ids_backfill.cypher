// Tombstones (DeletedRecordId) for the records deleted before deleted ids
// were kept: every delete audit entry whose record is gone. Migrate runs it
// once and then records the Migration deleted_ids_backfill; idempotent.
// $scopes narrows it to the entries of those scopes (null: all), so that a
// test re-runs it over its own records without touching the shared
// Migration node.
MATCH (a:AuditEntry {action: 'delete'})
WHERE ($scopes IS NULL OR a.scope IN $scopes)
  AND NOT EXISTS { MATCH (:Memory {id: a.recordId}) }
CALL (a) {
  MERGE (t:DeletedRecordId {id: a.recordId})
  ON CREATE SET t:Bookkeeping
} IN TRANSACTIONS OF 10000 ROWS
