// Serialise captures that create entities of the same names in the same
// scope, and find the entities they created: take the write locks of the
// lock buckets of the new names ($buckets: a hash of scope and name, at
// most 4096 EntityLock nodes, created on first use under the
// entity_lock_bucket constraint, in ascending order), then look the
// capture's entities up again. A capture that creates an entity records
// its id in the buckets of its names (capture_apply), so a second capture
// creating the same entity, which waits for the first to commit, finds it
// there even before the eventually consistent index has it.
CALL () {
  UNWIND $buckets AS b
  MERGE (l:EntityLock {bucket: b})
  SET l._lock = true
  REMOVE l._lock
  RETURN collect(l) AS locks
}
CALL (locks) {
  CALL db.index.fulltext.queryNodes('entity_name_terms', $query, {limit: $limit}) YIELD node AS e
  RETURN e
  UNION
  UNWIND locks AS l
  UNWIND coalesce(l.recent, []) AS rid
  MATCH (e:Memory {id: rid})
  RETURN e
}
WITH e
WHERE e:Entity AND e.scope = $scope AND e.status <> 'retracted'
  AND e.sensitivityLevel <= $ceiling AND ($allScopes OR e.scope = '' OR e.scope IN $trustScopes)
  AND any(t IN e.terms WHERE t IN $terms)
RETURN properties(e) AS e
