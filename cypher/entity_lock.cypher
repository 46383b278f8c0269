// Serialise captures that create entities of the same names in the same
// scope, and find the entities they created: take the write locks of the
// lock buckets of the new names ($buckets: a hash of scope and name, at
// most 4096 EntityLock nodes, created on first use under the
// entity_lock_bucket constraint, in ascending order), then look the
// capture's entities up again. A capture that creates an entity records
// its id in the buckets of its names (capture_apply), so a second capture
// creating the same entity, which waits for the first to commit, finds it
// there even before the eventually consistent index has it. Sealed
// entities are matched by $blindNames only (never by plaintext terms), as
// in entity_lookup.
CALL () {
  UNWIND $buckets AS b
  MERGE (l:EntityLock {bucket: b})
  ON CREATE SET l:Bookkeeping
  SET l._lock = true
  REMOVE l._lock
  RETURN collect(l) AS locks
}
CALL (locks) {
  CALL db.index.fulltext.queryNodes('entity_name_terms', $query, {limit: $limit}) YIELD node AS e
  RETURN e
  UNION
  WITH $blindQuery AS q
  WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_blind_names', q, {limit: $limit}) YIELD node AS e
  RETURN e
  UNION
  UNWIND locks AS l
  UNWIND coalesce(l.recent, []) AS rid
  MATCH (e:Memory {id: rid})
  RETURN e
}
WITH e
WHERE e:Entity AND e.scope = $scope AND NOT e.status IN ['retracted', 'superseded']
  AND e.sensitivityLevel <= $ceiling AND ($allScopes OR e.scope = '' OR e.scope IN $trustScopes)
  AND ((e.encrypted IS NULL AND any(t IN coalesce(e.terms, []) WHERE t IN $terms)) OR any(t IN coalesce(e.blindNames, []) WHERE t IN $blindNames))
RETURN properties(e) AS e
