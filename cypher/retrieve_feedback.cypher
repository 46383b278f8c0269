// The feedback documents of a full-text retrieval (query expansion,
// internal/membrane.Expansion): the full-text entries and scores of the
// best matches of $lucene among its best $scan, best first. They are the
// records the caller sees in full (trust and scopes), in the scopes asked
// for, that existed at $asOf and that may be hits (not retracted or
// superseded unless asked for), as the graph's seeds are
// (retrieve_candidates): a record the caller may not see lends no word to
// its query. The index returns its matches best first; $scan is small
// (internal/membrane.FeedbackScan), so this costs a fraction of the
// candidates' full-text query. It returns one row, the entries and
// scores in order: a row per match cost the driver 0.12-0.16 ms more of
// this statement's 2.7-2.9 ms.
CALL db.index.fulltext.queryNodes('memory_terms', $lucene, {limit: $scan}) YIELD node AS x, score
WHERE x.sensitivityLevel <= $ceiling AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
  AND ($scopes IS NULL OR x.scope IN $scopes) AND ($asOf IS NULL OR x.createdAt <= $asOf)
  AND ($includeRetracted OR NOT x.status IN ['retracted', 'superseded'])
RETURN collect([x.searchTerms, score]) AS docs
