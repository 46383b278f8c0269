// Link new episodes into their session chains: (:Memory)-[:NEXT]->(:Memory)
// from each episode of a session (scope and sessionKey) to the next one by
// (sessionAt, id) (docs/data-model.md, "Session chains").
//
// First the write locks of the sessions' lock buckets ($buckets: a hash of
// scope and session, at most 4096 SessionLock nodes created on first use
// under the session_lock_bucket constraint, in ascending order), so that
// two transactions adding to one session link one after the other, the
// second seeing the first's edges. Then $ids (the new records that have a
// sessionKey, in session and (sessionAt, id) order), one at a time, each
// execution seeing the edges of the ones before: each record goes between
// its predecessor p and successor s in its session (found through the
// memory_session index), replacing whatever NEXT left p and entered s.
// Records of the batch not linked yet can be p or s; processing them in
// order puts every one in its place.
CALL () {
  UNWIND $buckets AS b
  MERGE (l:SessionLock {bucket: b})
  ON CREATE SET l:Bookkeeping
  SET l._lock = true
  REMOVE l._lock
  RETURN count(l) AS locked
}
UNWIND $ids AS id
CALL (id) {
  MATCH (m:Memory {id: id})
  WHERE m.sessionKey IS NOT NULL
  CALL (m) {
    OPTIONAL MATCH (p:Memory)
    WHERE p.scope = m.scope AND p.sessionKey = m.sessionKey AND p.sessionAt <= m.sessionAt AND p <> m
      AND (p.sessionAt < m.sessionAt OR p.id < m.id)
    WITH p
    ORDER BY p.sessionAt DESC, p.id DESC
    LIMIT 1
    RETURN p
  }
  CALL (m) {
    OPTIONAL MATCH (s:Memory)
    WHERE s.scope = m.scope AND s.sessionKey = m.sessionKey AND s.sessionAt >= m.sessionAt AND s <> m
      AND (s.sessionAt > m.sessionAt OR s.id > m.id)
    WITH s
    ORDER BY s.sessionAt, s.id
    LIMIT 1
    RETURN s
  }
  CALL (p) {
    MATCH (p)-[old:NEXT]->()
    DELETE old
  }
  CALL (s) {
    MATCH ()-[old:NEXT]->(s)
    DELETE old
  }
  FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END |
    CREATE (x)-[:NEXT {weight: 1.0, createdAt: m.createdAt, actor: m.provenanceCreatedBy}]->(m))
  FOREACH (x IN CASE WHEN s IS NULL THEN [] ELSE [s] END |
    CREATE (m)-[:NEXT {weight: 1.0, createdAt: m.createdAt, actor: m.provenanceCreatedBy}]->(x))
  RETURN count(*) AS linked
}
RETURN sum(linked) AS linked
