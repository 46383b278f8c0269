// Apply one planned revision (internal/membrane.Change): new records, next
// states of locked records, edges and audit entries, all in the caller's
// transaction. Relationship types come from the fixed predicate vocabulary.
CALL {
  UNWIND $creates AS c
  CREATE (m:Memory {id: c.id})
  SET m += c.props
  SET m:$(c.label)
}
CALL {
  UNWIND $updates AS u
  MATCH (m:Memory {id: u.id})
  SET m += u.props
}
CALL {
  UNWIND $edges AS e
  MATCH (a:Memory {id: e.from}), (b:Memory {id: e.to})
  MERGE (a)-[r:$(e.type)]->(b)
  SET r += e.props
}
CALL {
  UNWIND $audits AS a
  MATCH (m:Memory {id: a.recordId})
  CREATE (x:AuditEntry:Unsequenced)
  SET x = a.props, x.scope = m.scope, x.sensitivityLevel = m.sensitivityLevel, x.recordType = m.type
  CREATE (m)-[:HAS_AUDIT]->(x)
}
// The revision's idempotency key, when it has one ($idem: no row or one,
// with idempotency_store's values), stored with the change instead of by
// a statement of its own. A concurrent request with the same key fails
// here on the idempotency_key constraint and then replays this result.
CALL {
  UNWIND $idem AS k
  CREATE (:IdempotencyKey:Bookkeeping {key: k.key, fingerprint: k.fingerprint, operation: k.operation,
    resultIds: k.resultIds, edges: k.edges, createdAt: k.now})
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
