// The hits of a full-text retrieval (see retrieve_candidates): the best
// $scan matches of $lucene in memory_terms, as [node, score, null].
CALL () {
  CALL db.index.fulltext.queryNodes('memory_terms', $lucene, {limit: $scan}) YIELD node, score
  RETURN collect([node, score, null]) AS hits
}
