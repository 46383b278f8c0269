// Apply one planned revision (internal/membrane.Change) if what it was
// planned from still holds: new records, next states of revised records,
// edges, audit entries and the idempotency key, all in one statement, which
// may run alone as an auto-commit transaction. Relationship types come from
// the fixed predicate vocabulary. Returns applied: 1, or 0 when the guard
// failed and nothing was written.
//
// The guard: every record the plan read ($guards, in id order: {id,
// props}, props null for a record that was missing) is locked, then all its
// properties are compared with those read. The lock comes first so that
// what is compared cannot change before the commit, and in id order so
// that two revisions over the same records cannot deadlock. All of them,
// not a version: the unlocked read (revise_read) is read committed, and a
// read that overlaps another revision's commit can return some properties
// from before it and some from after, the version among the new ones and
// the contest evidence among the old; a version alone then passes a plan
// made from a state that never existed, and that revision's evidence was
// lost (TestHotRecordRevisionsAllLand, about 1 run in 20 on a busy
// machine). Only a read equal to what the lock finds is a state the plan
// may build on; decay sweeps and episodic compression, which change
// salience without a version, are caught the same way. A record deleted
// since it was read, or created since it was read missing, fails it too;
// so does the idempotency key ($key) stored since it was looked up.
CALL {
  UNWIND $guards AS g
  OPTIONAL MATCH (m:Memory {id: g.id})
  WITH g, m
  ORDER BY g.id
  CALL (m) {
    WITH m
    WHERE m IS NOT NULL
    SET m._lock = true
    REMOVE m._lock
  }
  WITH g, m
  WHERE (m IS NULL) <> (g.props IS NULL) OR (m IS NOT NULL AND properties(m) <> g.props)
  RETURN count(*) AS stale
}
WITH stale
WHERE stale = 0 AND NOT EXISTS { MATCH (:IdempotencyKey {key: $key}) }
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
// An id that a deleted record had (its tombstone) fails the statement, and
// so rolls it back, on the deleted_record_id constraint: the caller answers
// as for a taken id. It is looked up after the records are created (see
// create_records): a delete of the same id that commits before memory_id
// is checked has committed its tombstone too, and one that commits later
// finds the new record.
CALL {
  UNWIND $creates AS c
  MATCH (:DeletedRecordId {id: c.id})
  CREATE (:DeletedRecordId {id: c.id})
}
RETURN count(*) AS applied
