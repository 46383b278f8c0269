// Groups of identical active facts (same scope, subject, predicate and
// object), each oldest first and at most $maxIds long, at most $limit
// groups. The first clause matches the records in reach.
__RECORDS__
WITH m
WHERE m:Semantic AND m.status = 'active'
WITH m
ORDER BY m.createdAt, m.id
WITH m.scope AS scope, m.subject AS subject, m.predicate AS predicate, m.object AS object, collect(m.id) AS ids
WHERE size(ids) > 1
RETURN ids[0..$maxIds] AS ids
LIMIT $limit
