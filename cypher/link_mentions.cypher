// The entities that the text of records being created may name, in scopes
// of more entities than link_mentions_scope reads whole (see
// internal/neo4j/mentions.go): for each of $queries ({scope, query}), the
// entities of that scope one of whose terms (canonical name or alias,
// internal/membrane.EntityTerms) is among the names the query lists, found
// through entity_name_terms as entity_lookup finds them (names and scope
// kept whole), which is eventually consistent. Only entities the writer
// sees in full, not retracted or superseded and not sealed (a sealed
// entity has no plaintext terms), at most $limit per query.
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entity_name_terms', q.query, {limit: $limit}) YIELD node AS e
WITH q, e
WHERE e:Entity AND e.scope = q.scope AND e.encrypted IS NULL AND NOT e.status IN ['retracted', 'superseded']
  AND e.sensitivityLevel <= $ceiling AND ($allScopes OR e.scope = '' OR e.scope IN $trustScopes)
RETURN DISTINCT e.scope AS scope, e.id AS id, coalesce(e.terms, []) AS terms, e.sensitivityLevel AS level
