// The oldest non-retracted fact of each key of $keys (scope, subject,
// predicate, object): what consolidation reinforces instead of creating a
// duplicate. semantic_subject_predicate makes each key an index seek.
UNWIND $keys AS k
MATCH (f:Semantic {subject: k.subject, predicate: k.predicate})
WHERE f.object = k.object AND f.scope = k.scope AND f.status <> 'retracted'
WITH k, f
ORDER BY f.createdAt, f.id
WITH k, collect(f)[0] AS f
RETURN k, properties(f) AS f
