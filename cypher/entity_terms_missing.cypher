// Entities written before entity terms existed (migration): a batch of
// those without the terms property.
MATCH (e:Entity)
WHERE e.terms IS NULL
RETURN properties(e) AS e
LIMIT $limit
