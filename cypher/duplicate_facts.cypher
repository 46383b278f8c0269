// Groups of identical active facts (same scope, subject, predicate and
// object), each oldest first and at most $maxIds long, at most $limit
// groups. The first clause matches the records in reach. Sealed facts
// store neither subject, predicate nor object: they are grouped by their
// keyed factKey (equal for equal facts sealed under the same key; after a
// rotation, once `membrane reseal` recomputed them), never with each other
// for lack of those fields.
__RECORDS__
WITH m
WHERE m:Semantic AND m.status = 'active' AND (m.encrypted IS NULL OR m.factKey IS NOT NULL)
WITH m
ORDER BY m.createdAt, m.id
WITH m.scope AS scope,
     CASE WHEN m.encrypted IS NULL THEN [m.subject, m.predicate, toString(m.object)] ELSE [m.factKey] END AS fact,
     collect(m.id) AS ids
WHERE size(ids) > 1
RETURN ids[0..$maxIds] AS ids
LIMIT $limit
