// The oldest non-retracted facts of each key of $keys ({id, digests}: the
// digests of scope, subject, predicate and object under which a fact may
// be stored, the unkeyed one of facts in clear and the keyed ones of sealed
// facts, membrane.FactKey; one index seek each): what consolidation
// reinforces instead of creating a duplicate. A few per key, oldest first:
// the caller takes the first that opens (one sealed under a key the server
// lacks must not hide a newer readable one). Facts written before factKey
// existed are not found here; the duplicate stage merges any copy made of
// them.
UNWIND $keys AS k
UNWIND k.digests AS d
MATCH (f:Semantic {factKey: d})
WHERE NOT f.status IN ['retracted', 'superseded']
WITH k, f
ORDER BY f.createdAt, f.id
WITH k, [f IN collect(f)[0..$candidates] | properties(f)] AS fs
RETURN k.id, fs
