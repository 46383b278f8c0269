// The hits of a retrieval with a query vector (see retrieve_candidates):
// the best $scan full-text matches of lucene (the expanded query,
// retrieve_expansion; none when it is empty) and the $vectorScan nearest
// embeddings in $vectorIndex, as [node, text score (0 when only the vector
// matched), cosine similarity (null when the record has no embedding of
// the query's dimensions)]. Neo4j's cosine similarity is (1 + cos) / 2;
// 2s - 1 turns it back into the cosine.
CALL (lucene) {
  CALL (lucene) {
    // A query of only stop words has no terms: the vector alone searches.
    WITH lucene
    WHERE lucene <> ''
    CALL db.index.fulltext.queryNodes('memory_terms', lucene, {limit: $scan}) YIELD node, score
    RETURN node, score
    UNION ALL
    CALL db.index.vector.queryNodes($vectorIndex, $vectorScan, $vector) YIELD node AS e
    MATCH (node:Memory)-[:HAS_EMBEDDING]->(e)
    RETURN node, 0.0 AS score
  }
  WITH node, max(score) AS score
  OPTIONAL MATCH (node)-[:HAS_EMBEDDING]->(e:MemoryVector)
  WHERE size(e.vector) = size($vector)
  WITH node, score, max(2.0 * vector.similarity.cosine(e.vector, $vector) - 1.0) AS cosine
  RETURN collect([node, score, cosine]) AS hits
}
