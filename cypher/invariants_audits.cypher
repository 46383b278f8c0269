// Invariant: no orphan audit entry. Every audit entry of the scope hangs off
// its record, unless the record was deleted (then a delete tombstone for it
// remains). Returns one row per violation; none when the invariant holds.
// Entries carry no scope index (it would cost every write an index entry):
// this one label scan is the check's cost, run by tests and operators.
MATCH (a:AuditEntry {scope: $scope})
WHERE NOT EXISTS { MATCH (:Memory {id: a.recordId})-[:HAS_AUDIT]->(a) }
  // d.at IS NOT NULL (every entry has it) lets the planner seek the
  // (recordId, at) index; without it, it scans every entry per entry.
  AND NOT EXISTS { MATCH (d:AuditEntry {recordId: a.recordId}) WHERE d.at IS NOT NULL AND d.action = 'delete' }
RETURN 'audit entry ' + a.id + ' (' + a.action + ') of record ' + a.recordId + ' has no record' AS violation
LIMIT 20
