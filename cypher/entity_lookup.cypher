// The entities a capture resolves its mentions against: those of $scope
// named (canonical name or alias) by any of the capture's terms, not
// retracted, and seen in full by the request. entity_name_terms indexes
// Entity.terms and Entity.scope with the keyword analyzer, so $query (built
// in Go from quoted, escaped terms and the scope) matches whole names and
// the exact scope; the WHERE clause checks both again. Sealed entities have
// no terms: they are found by the keyed digests of scope and name
// ($blindNames, $blindQuery over entity_blind_names), which Go passes only
// to a request whose ceiling reaches sealed records (null otherwise, and
// the index is not queried). Plaintext terms count only on entities that
// are not sealed: an earlier version's start-up wrote sealed names back
// into terms, and such terms must never link. The indexes are eventually consistent: an
// entity committed a moment ago may be missing, which entity_lock makes up
// for.
CALL () {
  CALL db.index.fulltext.queryNodes('entity_name_terms', $query, {limit: $limit}) YIELD node AS e
  RETURN e
  UNION
  WITH $blindQuery AS q
  WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_blind_names', q, {limit: $limit}) YIELD node AS e
  RETURN e
}
WITH e
WHERE e:Entity AND e.scope = $scope AND NOT e.status IN ['retracted', 'superseded']
  AND e.sensitivityLevel <= $ceiling AND ($allScopes OR e.scope = '' OR e.scope IN $trustScopes)
  AND ((e.encrypted IS NULL AND any(t IN coalesce(e.terms, []) WHERE t IN $terms)) OR any(t IN coalesce(e.blindNames, []) WHERE t IN $blindNames))
RETURN properties(e) AS e
