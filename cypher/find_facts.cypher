// The oldest non-retracted fact of each key of $keys ({id, digests}: the
// digests of scope, subject, predicate and object under which a fact may
// be stored, the unkeyed one of facts in clear and the keyed ones of sealed
// facts, membrane.FactKey; one index seek each): what consolidation
// reinforces instead of creating a duplicate. Facts written before factKey
// existed are not found here; the duplicate stage merges any copy made of
// them.
UNWIND $keys AS k
UNWIND k.digests AS d
MATCH (f:Semantic {factKey: d})
WHERE f.status <> 'retracted'
WITH k, f
ORDER BY f.createdAt, f.id
WITH k, collect(f)[0] AS f
RETURN k.id, properties(f) AS f
