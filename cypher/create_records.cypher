// Create records and their create audit entries, one row per record.
// $records: [{id, label, props, audit, vector, model}]. The label comes from
// the fixed type vocabulary; a duplicate id fails the whole transaction on
// memory_id, and an id a deleted record had is counted in reused (the
// caller then rolls back). A record's embedding (vector search), when given, goes on its
// own MemoryVector node, stored as 32-bit floats (db.create.setNodeVectorProperty:
// half the bytes of a list of Cypher floats, and half the reading for a cosine).
UNWIND $records AS r
CREATE (m:Memory {id: r.id})
SET m += r.props
SET m:$(r.label)
WITH m, r
CALL (m, r) {
  WITH m, r
  WHERE r.vector IS NOT NULL
  CREATE (m)-[:HAS_EMBEDDING]->(e:MemoryVector:Bookkeeping {model: r.model, createdAt: m.createdAt})
  WITH e, r
  CALL db.create.setNodeVectorProperty(e, 'vector', r.vector)
}
CREATE (a:AuditEntry:Unsequenced)
SET a = r.audit, a.scope = m.scope, a.sensitivityLevel = m.sensitivityLevel, a.recordType = m.type
CREATE (m)-[:HAS_AUDIT]->(a)
// The tombstones are looked up after the records are created: a delete of
// the same id that commits before memory_id is checked has committed its
// tombstone too, and one that commits later finds the new record.
WITH r
OPTIONAL MATCH (t:DeletedRecordId {id: r.id})
RETURN count(*) AS created, count(t) AS reused
