// The entities of the scopes of records being created, whose text may name
// them (see internal/neo4j/mentions.go): for each of $lookups ({scope,
// query, few}, query naming every entity of the scope in entity_name_terms,
// which is eventually consistent), all of them when the scope has at most
// few, which Go then looks for in the texts; a scope with more gives one
// row with a null id, and Go looks the texts' names up in it instead
// (link_mentions). Only entities the writer sees in full, not retracted or
// superseded and not sealed (a sealed entity has no plaintext terms).
UNWIND $lookups AS s
CALL (s) {
  CALL db.index.fulltext.queryNodes('entity_name_terms', s.query, {limit: s.few + 1}) YIELD node
  RETURN collect(node) AS every
}
UNWIND CASE WHEN size(every) > s.few THEN [null] ELSE every END AS e
WITH s, e
WHERE e IS NULL OR (e:Entity AND e.scope = s.scope AND e.encrypted IS NULL AND NOT e.status IN ['retracted', 'superseded']
  AND e.sensitivityLevel <= $ceiling AND ($allScopes OR e.scope = '' OR e.scope IN $trustScopes))
RETURN s.scope AS scope, e.id AS id, coalesce(e.terms, []) AS terms, e.sensitivityLevel AS level
