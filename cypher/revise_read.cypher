// Read what a revision plans from, without a lock, in one round trip: the
// records it revises ($ids; all must exist) and those it reads but does not
// change ($read; they may be missing). Nothing here holds: apply_change's
// guard compares what was read with what the write finds, and the revision
// runs again when they differ. With $key (null: none), the revision's
// idempotency key comes along when it is stored (idempotency_lookup's
// values), so that a keyed revision looks it up without a statement of its
// own, and the records of its result ('result' rows), so that a replay
// answers from this one read. kind says what a row is: 'revised', 'read',
// 'key' or 'result'.
CALL () {
  MATCH (m:Memory)
  WHERE m.id IN $ids
  RETURN properties(m) AS m, 'revised' AS kind
  UNION ALL
  MATCH (m:Memory)
  WHERE m.id IN $read
  RETURN properties(m) AS m, 'read' AS kind
  UNION ALL
  MATCH (k:IdempotencyKey {key: $key})
  RETURN {fingerprint: k.fingerprint, resultIds: k.resultIds, edges: k.edges} AS m, 'key' AS kind
  UNION ALL
  MATCH (k:IdempotencyKey {key: $key})
  UNWIND k.resultIds AS id
  MATCH (m:Memory {id: id})
  RETURN properties(m) AS m, 'result' AS kind
}
RETURN m, kind
