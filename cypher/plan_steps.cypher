// Store plan graphs as subgraphs: for each new plan_graph record of $plans,
// one (:PlanStep) node per plan node, linked from the record by HAS_STEP,
// and NEXT (control flow) or DATA (data dependency) edges between steps, so
// a plan can be seen and traversed in Neo4j Browser. They are derived from
// the payload, which stays the source of truth. Link types come from the
// fixed pair NEXT/DATA (internal/membrane.PlanSubgraph).
UNWIND $plans AS p
MATCH (m:Memory {id: p.recordId})
CALL (m, p) {
  UNWIND p.steps AS s
  CREATE (m)-[:HAS_STEP]->(:PlanStep {id: s.id, planRecordId: m.id, stepId: s.stepId, name: s.op, op: s.op,
                                      params: s.params, guards: s.guards, position: s.position})
}
CALL (m, p) {
  UNWIND p.links AS l
  MATCH (m)-[:HAS_STEP]->(a:PlanStep {stepId: l.from})
  MATCH (m)-[:HAS_STEP]->(b:PlanStep {stepId: l.to})
  MERGE (a)-[:$(l.type)]->(b)
}
RETURN count(*) AS plans
