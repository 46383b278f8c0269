// Create records and their create audit entries, one row per record.
// $records: [{id, label, props, audit, vector, model}]. The label comes from
// the fixed type vocabulary; a duplicate id fails the whole transaction on
// memory_id, and an id a deleted record had is counted in reused (the
// caller then rolls back). A record's embedding (vector search), when given, goes on its
// own MemoryVector node.
UNWIND $records AS r
CREATE (m:Memory {id: r.id})
SET m += r.props
SET m:$(r.label)
FOREACH (v IN CASE WHEN r.vector IS NULL THEN [] ELSE [r.vector] END |
  CREATE (m)-[:HAS_EMBEDDING]->(:MemoryVector:Bookkeeping {vector: v, model: r.model, createdAt: m.createdAt}))
CREATE (a:AuditEntry:Unsequenced)
SET a = r.audit, a.scope = m.scope, a.sensitivityLevel = m.sensitivityLevel, a.recordType = m.type
CREATE (m)-[:HAS_AUDIT]->(a)
// The tombstones are looked up after the records are created: a delete of
// the same id that commits before memory_id is checked has committed its
// tombstone too, and one that commits later finds the new record.
WITH r
OPTIONAL MATCH (t:DeletedRecordId {id: r.id})
RETURN count(*) AS created, count(t) AS reused
