// A batch of sealed records whose lookup digests are not keyed yet, after
// id $after in id order: entities with plaintext terms (an earlier start
// wrote them) or without blindNames, facts and competences whose factKey or
// skillKey is the unkeyed SHA-256 of an earlier version (no digestKeyId).
// The migration computes the keyed digests in Go and writes them with
// sealed_digests_set, in the same transaction (the records are locked).
// $scopes narrows it to the records of those scopes (null: all), so that a
// test re-runs the pass over its own records without touching the shared
// Migration node.
MATCH (m:Memory)
WHERE m.encrypted = true AND m.id > $after AND ($scopes IS NULL OR m.scope IN $scopes)
  AND ((m:Entity AND (m.terms IS NOT NULL OR m.blindNames IS NULL))
    OR ((m.factKey IS NOT NULL OR m.skillKey IS NOT NULL) AND m.digestKeyId IS NULL))
WITH m
ORDER BY m.id
LIMIT $limit
SET m._lock = true
REMOVE m._lock
RETURN properties(m) AS m
