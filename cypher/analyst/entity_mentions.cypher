// An entity by name or alias (normalised: lower case), with the records
// that mention it and the facts about it (captureMemory's edges).
// :param name => 'auth-service'
MATCH (e:Entity)
WHERE NOT e.status IN ['retracted', 'superseded'] AND toLower(trim($name)) IN e.terms
OPTIONAL MATCH (c:Memory)-[:MENTIONS]->(e)
OPTIONAL MATCH (f:Semantic)-[:ABOUT]->(e)
RETURN e.name AS entity, e.scope AS scope, e.id AS id,
       collect(DISTINCT c.name)[0..20] AS mentionedBy, collect(DISTINCT f.name)[0..20] AS facts
LIMIT 25
