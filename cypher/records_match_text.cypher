// The records a listing starts from with a text filter: the best
// $textMatches matches of $lucene in memory_terms, the index retrieve
// searches, built by the same functions from the same terms and restricted
// to the scopes the request searches inside the index query (its scope
// clause, scopedLucene in internal/neo4j), and the best $textMatches matches of
// $blindLucene in memory_blind (sealed records, by the keyed tokens of the
// same terms; null, and the index not queried, unless the request's ceiling
// reaches sealed records), as retrieve_hits_blind. The text restricts the
// set; the listing's order and keyset paging stay those asked for. The
// bound (membrane.MaxTextMatches) keeps the cost of a listing by text
// independent of how many records share its words: a text matching more
// lists the best of them. The index query restricts by scope only: matches
// above the caller's ceiling, or dropped by the filters, count towards the
// bound before record_filter removes them (docs/retrieval.md). Matching a
// record's text is reading it, so record_filter keeps only the records the
// request sees in full when $lucene is set.
CALL () {
  CALL db.index.fulltext.queryNodes('memory_terms', $lucene, {limit: $textMatches}) YIELD node
  RETURN node
  UNION
  UNWIND CASE WHEN $blindLucene IS NULL THEN [] ELSE [$blindLucene] END AS q
  CALL db.index.fulltext.queryNodes('memory_blind', q, {limit: $textMatches}) YIELD node
  RETURN node
}
WITH node AS m
