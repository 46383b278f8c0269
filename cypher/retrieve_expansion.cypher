// The full-text query of a retrieval expanded with the words of its best
// match (query expansion, internal/membrane.Expansion, which defines it:
// TestExpansionStatement holds this fragment to it), so that retrieve
// stays one statement. It binds lucene for the hits fragments, and read
// and scores (what it read) for that test.
//
// $lucene is the query's own terms (luceneQuery, in scopedLucene
// when the request is scoped), or '' without terms: then nothing is read
// or expanded. The expanded query is $luceneHead, the lent words and
// $luceneTail: expandedLuceneQuery, in scopedLucene when scoped (all three
// in internal/neo4j, lucene.go).
// The feedback documents are its best $feedbackScan matches the caller
// sees in full, in the scopes asked for, that existed at $asOf and that
// may be hits (not retracted or superseded unless asked for): a record the
// caller may not see lends no word to its query, as it is no seed of the
// graph signals (retrieve_candidates). Each is read as its full-text
// entry's first $feedbackDocTerms terms (scope token first), with its
// score: the lent words' cost is per term read.
CALL () {
  UNWIND CASE WHEN $lucene = '' THEN [] ELSE [$lucene] END AS q
  CALL db.index.fulltext.queryNodes('memory_terms', q, {limit: $feedbackScan}) YIELD node AS x, score
  WHERE x.sensitivityLevel <= $ceiling AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
    AND ($scopes IS NULL OR x.scope IN $scopes) AND ($asOf IS NULL OR x.createdAt <= $asOf)
    AND ($includeRetracted OR NOT x.status IN ['retracted', 'superseded'])
  RETURN collect([t IN split(coalesce(x.searchTerms, ''), ' ')[0..$feedbackDocTerms] WHERE t <> '']) AS read, collect(score) AS scores
}
// The lent words: of the first $feedbackDocs documents with a positive
// score and a term besides the scope token (used), each term weighs
// Σ score(d) / Σ score(used) / |d| per occurrence (|d|: d's terms but the
// scope token). A word of $feedbackWord (letters), not the query's own,
// that at most half of the documents read hold (in), is eligible; the
// heaviest $feedbackTerms go, ties to the word more documents hold, then
// by word. One row always (the aggregate), lent empty without feedback.
CALL (read, scores) {
  WITH read, scores, [i IN range(0, size(read) - 1)
      WHERE scores[i] > 0 AND any(t IN read[i] WHERE NOT t STARTS WITH '#')][0..$feedbackDocs] AS used
  WITH read, scores, used, reduce(s = 0.0, i IN used | s + scores[i]) AS total
  UNWIND range(0, size(read) - 1) AS i
  WITH i, read[i] AS doc, size(read) AS n, CASE WHEN i IN used
      THEN scores[i] / total / size([t IN read[i] WHERE NOT t STARTS WITH '#'])
      ELSE 0.0 END AS share
  UNWIND doc AS t
  WITH t, n, sum(share) AS w, count(DISTINCT i) AS in
  WHERE w > 0 AND t =~ $feedbackWord AND NOT t IN $queryTerms AND (n <= 1 OR 2 * in <= n)
  ORDER BY w DESC, in DESC, t
  LIMIT $feedbackTerms
  RETURN collect([t, w]) AS lent
}
// The expanded query: each lent word an optional clause boosted by
// $feedbackWeight times its weight over the heaviest's, written as
// formatBoost writes it (four decimals, half up).
WITH read, scores, lent, [e IN lent | toInteger(round($feedbackWeight * e[1] / lent[0][1] * 10000))] AS boosts
WITH read, scores, CASE WHEN $lucene = '' THEN '' ELSE $luceneHead + reduce(s = '', i IN range(0, size(lent) - 1) |
    s + ' ' + lent[i][0] + '^' + toString(boosts[i] / 10000) + '.' + substring(toString(10000 + boosts[i] % 10000), 1)) + $luceneTail END AS lucene
