// The hits of a full-text retrieval (see retrieve_candidates): the best
// $scan matches of lucene (the expanded query, retrieve_expansion) in
// memory_terms, as [node, score, null].
CALL (lucene) {
  CALL db.index.fulltext.queryNodes('memory_terms', lucene, {limit: $scan}) YIELD node, score
  RETURN collect([node, score, null]) AS hits
}
