// Invariant: no orphan audit entry. Every audit entry of the scope hangs off
// its record, unless the record was deleted (then a delete tombstone for it
// remains). Returns one row per violation; none when the invariant holds.
MATCH (a:AuditEntry {scope: $scope})
WHERE NOT EXISTS { MATCH (:Memory {id: a.recordId})-[:HAS_AUDIT]->(a) }
  AND NOT EXISTS { MATCH (:AuditEntry {recordId: a.recordId, action: 'delete'}) }
RETURN 'audit entry ' + a.id + ' (' + a.action + ') of record ' + a.recordId + ' has no record' AS violation
LIMIT 20
