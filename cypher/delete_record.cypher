// Delete record $id with its edges, plan steps and embedding, leaving the tombstone
// $audit. Audit entries are nodes of their own linked by HAS_AUDIT, so
// DETACH DELETE removes only the links: the record's trail, found by
// recordId, stays, and the tombstone joins it. The id's tombstone
// (DeletedRecordId) keeps it from ever being used again.
MATCH (m:Memory {id: $id})
OPTIONAL MATCH (m)-[:HAS_STEP]->(s:PlanStep)
DETACH DELETE s
WITH DISTINCT m
// Its embedding goes with it (a vector node left behind would keep the
// record's meaning in the vector index).
OPTIONAL MATCH (m)-[:HAS_EMBEDDING]->(e:MemoryVector)
DETACH DELETE e
WITH DISTINCT m
// Its session neighbours close the gap it leaves (session_link).
CALL (m) {
  MATCH (p:Memory)-[:NEXT]->(m)-[:NEXT]->(s:Memory)
  CREATE (p)-[:NEXT {weight: 1.0, createdAt: s.createdAt, actor: s.provenanceCreatedBy}]->(s)
}
CREATE (a:AuditEntry:Unsequenced)
SET a = $audit, a.scope = m.scope, a.sensitivityLevel = m.sensitivityLevel, a.recordType = m.type
MERGE (t:DeletedRecordId {id: m.id})
ON CREATE SET t:Bookkeeping
DETACH DELETE m
RETURN count(*) AS deleted
