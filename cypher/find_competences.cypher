// The oldest active competence of each (skill name, scope) of $keys, by the
// digests it may be stored under (as find_facts).
UNWIND $keys AS k
UNWIND k.digests AS d
MATCH (c:Competence {skillKey: d})
WHERE c.scope = k.scope AND c.status = 'active'
WITH k, c
ORDER BY c.createdAt, c.id
WITH k, collect(c)[0] AS c
RETURN k, properties(c) AS c
