// Link records just created (create_records, in the same transaction) to
// the entities their text names: each of $records ({id, scope, names,
// query, batch}) MENTIONS the entities of its own scope one of whose terms
// (canonical name or alias, internal/membrane.EntityTerms) is among names
// (internal/membrane.MentionCandidates of its text). They are found
// through entity_name_terms ($query: the scope and the names, as
// entity_lookup queries it), which is eventually consistent, and, for the
// entities created in the same batch (not in the index yet), by the ids
// Go matched (batch). An entity counts only when the writer sees it in
// full, it is not retracted or superseded and not sealed (a sealed entity
// has no plaintext terms), and it is at least as sensitive as the record:
// whoever sees the entity in full then sees the record in full too, so the
// edge never tells a reader who sees the record redacted a name its text
// holds. At most $limit per record. The edge cannot
// exist yet (the record is new): CREATE, as a capture's mentions.
UNWIND $records AS r
MATCH (m:Memory {id: r.id})
CALL (m, r) {
  CALL (r) {
    UNWIND r.batch AS id
    MATCH (e:Memory {id: id})
    RETURN e
    UNION
    CALL db.index.fulltext.queryNodes('entity_name_terms', r.query, {limit: $limit}) YIELD node AS e
    RETURN e
  }
  WITH m, r, e
  WHERE e:Entity AND e.scope = r.scope AND e.encrypted IS NULL AND NOT e.status IN ['retracted', 'superseded']
    AND e.sensitivityLevel <= $ceiling AND ($allScopes OR e.scope = '' OR e.scope IN $trustScopes)
    AND e.sensitivityLevel >= m.sensitivityLevel
    AND any(t IN coalesce(e.terms, []) WHERE t IN r.names)
  WITH m, e
  ORDER BY e.id
  LIMIT $limit
  CREATE (m)-[x:MENTIONS]->(e)
  SET x.weight = 1.0, x.createdAt = m.createdAt, x.actor = m.provenanceCreatedBy
  RETURN count(*) AS linked
}
RETURN sum(linked) AS linked
