// The feedback documents of a full-text retrieval (query expansion,
// internal/membrane.Expansion): the full-text entries of the best $docs
// matches of $lucene among its best $scan, with their scores. They are
// chosen as the graph's seeds are (retrieve_candidates): records the
// caller sees in full (trust and scopes), in the scopes asked for, that
// existed at $asOf and that may be hits (not retracted or superseded unless
// asked for); a record the caller may not see lends no word to its query.
CALL db.index.fulltext.queryNodes('memory_terms', $lucene, {limit: $scan}) YIELD node AS x, score
WHERE x.sensitivityLevel <= $ceiling AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
  AND ($scopes IS NULL OR x.scope IN $scopes) AND ($asOf IS NULL OR x.createdAt <= $asOf)
  AND ($includeRetracted OR NOT x.status IN ['retracted', 'superseded'])
WITH x, score
ORDER BY score DESC, x.id
LIMIT $docs
RETURN x.searchTerms AS terms, score
