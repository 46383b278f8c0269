// Replace a record's properties if it is still at the version that was read
// (optimistic concurrency), and append one audit entry. No row back means
// the record changed or vanished in between.
MATCH (m:Memory {id: $id})
WHERE m.version = $expectedVersion
SET m += $props
CREATE (a:AuditEntry)
SET a = $audit
CREATE (m)-[:HAS_AUDIT]->(a)
RETURN m.version AS version
