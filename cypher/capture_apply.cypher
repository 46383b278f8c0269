// Write a planned capture (internal/membrane.CapturePlan): its new records,
// their embeddings (vector search), edges and audit entries, in the
// caller's transaction. Every edge starts at a record created here, so it
// cannot exist yet: CREATE, not MERGE, which would lock the entity at its
// other end (a busy entity is mentioned by many concurrent captures).
// Relationship types come from the fixed predicate vocabulary.
CALL {
  UNWIND $creates AS c
  CREATE (m:Memory {id: c.id})
  SET m += c.props
  SET m:$(c.label)
}
CALL {
  UNWIND $edges AS e
  MATCH (a:Memory {id: e.from}), (b:Memory {id: e.to})
  CREATE (a)-[r:$(e.type)]->(b)
  SET r += e.props
}
CALL {
  UNWIND $vectors AS x
  MATCH (m:Memory {id: x.id})
  CREATE (m)-[:HAS_EMBEDDING]->(e:MemoryVector:Bookkeeping {model: x.model, createdAt: m.createdAt})
  WITH e, x
  // 32-bit floats, as create_records stores them.
  CALL db.create.setNodeVectorProperty(e, 'vector', x.vector)
}
CALL {
  // New entities' ids go to the lock buckets of their names (the 32 most
  // recent are kept), where entity_lock finds them (see there).
  UNWIND $recent AS x
  MATCH (l:EntityLock {bucket: x.bucket})
  SET l.recent = ([x.id] + coalesce(l.recent, []))[0..32]
}
CALL {
  UNWIND $audits AS a
  MATCH (m:Memory {id: a.recordId})
  CREATE (x:AuditEntry:Unsequenced)
  SET x = a.props, x.scope = m.scope, x.sensitivityLevel = m.sensitivityLevel, x.recordType = m.type
  CREATE (m)-[:HAS_AUDIT]->(x)
}
// Ids that a deleted record had (their tombstones), checked after the
// records are created (see create_records); the caller rolls back when
// there are any.
CALL {
  UNWIND $creates AS c
  OPTIONAL MATCH (t:DeletedRecordId {id: c.id})
  RETURN count(t) AS reused
}
RETURN reused
