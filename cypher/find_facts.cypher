// The oldest non-retracted fact of each key of $keys (by factKey, the
// digest of scope, subject, predicate and object: one index seek each):
// what consolidation reinforces instead of creating a duplicate. Facts
// written before factKey existed are not found here; the duplicate stage
// merges any copy made of them.
UNWIND $keys AS k
MATCH (f:Semantic {factKey: k})
WHERE f.status <> 'retracted'
WITH k, f
ORDER BY f.createdAt, f.id
WITH k, collect(f)[0] AS f
RETURN k, properties(f) AS f
