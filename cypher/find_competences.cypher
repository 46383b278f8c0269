// The oldest active competence of each (skill name, scope) of $keys.
UNWIND $keys AS k
MATCH (c:Competence {skillKey: k.skillKey})
WHERE c.scope = k.scope AND c.status = 'active'
WITH k, c
ORDER BY c.createdAt, c.id
WITH k, collect(c)[0] AS c
RETURN k, properties(c) AS c
