// Deletes every record of a scope with its audit entries, edges, plan
// steps and embeddings, in batches: for tests and load tests that write
// thousands of records into the shared test database, never for requests. The audit entries go
// first, found through the records (by index on Memory.scope).
MATCH (m:Memory {scope: $scope})-[:HAS_AUDIT]->(a:AuditEntry)
CALL (a) { DETACH DELETE a } IN TRANSACTIONS OF 5000 ROWS;
MATCH (m:Memory {scope: $scope})
CALL (m) {
  OPTIONAL MATCH (m)-[:HAS_STEP|HAS_EMBEDDING]->(x:PlanStep|MemoryVector)
  DETACH DELETE x
  WITH DISTINCT m
  DETACH DELETE m
} IN TRANSACTIONS OF 5000 ROWS
