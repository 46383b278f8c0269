// The records a listing starts from with a text filter: every match of
// $lucene in memory_terms, the index retrieve searches, built by the same
// function from the same terms. All matches are read (no limit): the text
// restricts the set, the listing's order and keyset paging stay those asked
// for, so a page cannot leave out a match of lower text score. Matching a
// record's text is reading it, so record_filter keeps only the records the
// request sees in full when $lucene is set.
CALL db.index.fulltext.queryNodes('memory_terms', $lucene) YIELD node AS m
