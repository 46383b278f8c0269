// Migration audit_refs: the next $limit records after id $after, in id
// order, that supersede others, with the ids they supersede: before audit
// references a successor's provenance named the old record (kind event,
// ref its id), shown to everyone who sees the successor. $scopes as in
// audit_refs_batch.
MATCH (n:Memory)
WHERE n.id > $after AND ($scopes IS NULL OR n.scope IN $scopes) AND EXISTS { (n)-[:SUPERSEDES]->(:Memory) }
WITH n ORDER BY n.id LIMIT $limit
RETURN n.id AS id, n.provenanceSources AS sources, COLLECT { MATCH (n)-[:SUPERSEDES]->(o:Memory) RETURN o.id } AS olds
ORDER BY id
