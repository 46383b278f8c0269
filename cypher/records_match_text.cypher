// The records a listing starts from with a text filter: every match of
// $lucene in memory_terms, the index retrieve searches, built by the same
// function from the same terms, and every match of $blindLucene in
// memory_blind (sealed records, by the keyed tokens of the same terms; null,
// and the index not queried, unless the request's ceiling reaches sealed
// records), as retrieve_hits_blind. All matches are read (no limit): the text
// restricts the set, the listing's order and keyset paging stay those asked
// for, so a page cannot leave out a match of lower text score. Matching a
// record's text is reading it, so record_filter keeps only the records the
// request sees in full when $lucene is set.
CALL () {
  CALL db.index.fulltext.queryNodes('memory_terms', $lucene) YIELD node
  RETURN node
  UNION
  UNWIND CASE WHEN $blindLucene IS NULL THEN [] ELSE [$blindLucene] END AS q
  CALL db.index.fulltext.queryNodes('memory_blind', q) YIELD node
  RETURN node
}
WITH node AS m
