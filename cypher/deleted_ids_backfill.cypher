// Tombstones (DeletedRecordId) for the records deleted before deleted ids
// were kept: every delete audit entry whose record is gone. Migrate runs it
// once and then records the Migration deleted_ids_backfill; idempotent.
MATCH (a:AuditEntry {action: 'delete'})
WHERE NOT EXISTS { MATCH (:Memory {id: a.recordId}) }
CALL (a) {
  MERGE (t:DeletedRecordId {id: a.recordId})
  ON CREATE SET t:Bookkeeping
} IN TRANSACTIONS OF 10000 ROWS
