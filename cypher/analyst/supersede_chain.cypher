// A record's supersede chain, oldest first, with who revised it and why.
// :param id => '<newFact.id>'
MATCH (r:Memory {id: $id})
MATCH (r)-[:SUPERSEDES*0..200]-(x:Memory)
WITH DISTINCT x
OPTIONAL MATCH (x)-[:HAS_AUDIT]->(a:AuditEntry {action: 'supersede'})
RETURN x.createdAt AS created, x.name AS record, x.status AS status, x.id AS id, a.actor AS supersededBy, a.rationale AS why
ORDER BY created
