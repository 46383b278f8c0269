// Entities written before entity terms existed (migration): a batch of
// those in clear without the terms property. Sealed entities never get
// plaintext terms: they are resolved by their keyed blindNames
// (sealed_digests_missing gives them those).
MATCH (e:Entity)
WHERE e.terms IS NULL AND e.encrypted IS NULL AND NOT e.payload STARTS WITH 'mbx1:'
RETURN properties(e) AS e
LIMIT $limit
