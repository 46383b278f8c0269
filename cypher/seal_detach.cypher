// Detach records $ids, whose sensitivity just crossed the encryption
// threshold, from what would keep their content or position in clear beside
// them (a record created sealed never has any of it; one lowered is then
// attached again as a new record is, internal/neo4j apply): their embedding (an embedding
// of sensitive text is sensitive text, and it stays in the vector index),
// their plan steps (ops and parameters in clear), and their place in a
// session chain (sealed episodes are in no chain; their neighbours close
// the gap, as when a record is deleted).
UNWIND $ids AS id
MATCH (m:Memory {id: id})
CALL (m) {
  OPTIONAL MATCH (m)-[:HAS_EMBEDDING]->(e:MemoryVector)
  DETACH DELETE e
}
CALL (m) {
  OPTIONAL MATCH (m)-[:HAS_STEP]->(s:PlanStep)
  DETACH DELETE s
}
CALL (m) {
  MATCH (p:Memory)-[:NEXT]->(m)-[:NEXT]->(s:Memory)
  CREATE (p)-[:NEXT {weight: 1.0, createdAt: s.createdAt, actor: s.provenanceCreatedBy}]->(s)
}
CALL (m) {
  OPTIONAL MATCH (m)-[r:NEXT]-()
  DELETE r
}
RETURN count(*) AS detached
