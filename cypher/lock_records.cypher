// Read the records of a revision in one round trip: $ids under a write
// lock, and $read (records it reads but does not change; they may be
// missing) without one. The locks are taken in id order so two revisions
// over the same records cannot deadlock. Setting and removing a property
// leaves the node unchanged but holds its lock to the end of the
// transaction, so what is read here cannot change before the write: of two
// racing revisions of one record, the second sees the first's result.
// With $key (null: none), the revision's idempotency key comes along when
// it is stored (idempotency_lookup's values), so that a keyed revision
// looks it up without a statement of its own. kind says what a row is:
// 'locked', 'read' or 'key'.
CALL () {
  MATCH (m:Memory)
  WHERE m.id IN $ids
  WITH m
  ORDER BY m.id
  SET m._lock = true
  REMOVE m._lock
  RETURN properties(m) AS m, 'locked' AS kind
  UNION ALL
  MATCH (m:Memory)
  WHERE m.id IN $read
  RETURN properties(m) AS m, 'read' AS kind
  UNION ALL
  MATCH (k:IdempotencyKey {key: $key})
  RETURN {fingerprint: k.fingerprint, resultIds: k.resultIds, edges: k.edges} AS m, 'key' AS kind
}
RETURN m, kind
