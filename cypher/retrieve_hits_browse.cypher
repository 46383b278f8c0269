// The hits of a retrieval without a query (see retrieve_candidates): the
// $scan newest records the request sees in full, walking the createdAt
// index from the newest, as [node, 0, null].
CALL () {
  MATCH (m:Memory)
  WHERE m.createdAt IS NOT NULL
    AND m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
    AND m.type IN $layers AND ($scopes IS NULL OR m.scope IN $scopes)
    AND ($asOf IS NULL OR m.createdAt <= $asOf)
    AND ($tags IS NULL OR all(t IN $tags WHERE t IN m.tags))
  WITH m
  ORDER BY m.createdAt DESC
  LIMIT $scan
  RETURN collect([m, 0.0, null]) AS hits
}
