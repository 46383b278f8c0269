// The hits of a retrieval among sealed records (see retrieve_candidates),
// appended to those of retrieve_hits_text or retrieve_hits_vector: the best
// $scan matches of $blindLucene (the query's terms as keyed tokens under
// every configured key, docs/security.md) in memory_blind, as
// [node, score, null], like the text hits. $blindLucene is null unless the
// request's ceiling reaches sealed records: the index is then not queried.
// Gating is retrieve_candidates' own, as for every hit. Both scores are
// BM25 over their own index; retrieve_candidates normalises them by the
// best score among the candidates the request sees.
CALL () {
  UNWIND CASE WHEN $blindLucene IS NULL THEN [] ELSE [$blindLucene] END AS q
  CALL db.index.fulltext.queryNodes('memory_blind', q, {limit: $scan}) YIELD node, score
  RETURN collect([node, score, null]) AS blind
}
WITH hits + blind AS hits
