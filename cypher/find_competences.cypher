// The oldest active competences of each (skill name, scope) of $keys, by
// the digests they may be stored under, a few per key (as find_facts).
UNWIND $keys AS k
UNWIND k.digests AS d
MATCH (c:Competence {skillKey: d})
WHERE c.scope = k.scope AND c.status = 'active'
WITH k, c
ORDER BY c.createdAt, c.id
WITH k, [c IN collect(c)[0..$candidates] | properties(c)] AS cs
RETURN k, cs
