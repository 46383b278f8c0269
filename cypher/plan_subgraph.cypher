// The steps of plan record $id in order, each with the steps it leads to
// (NEXT: control flow, DATA: data dependency).
MATCH (m:Memory {id: $id})-[:HAS_STEP]->(s:PlanStep)
OPTIONAL MATCH (s)-[l:NEXT|DATA]->(t:PlanStep)
WITH s, l, t
ORDER BY s.position, type(l), t.position
WITH s, collect(CASE WHEN l IS NULL THEN null ELSE {type: type(l), to: t.stepId} END) AS links
ORDER BY s.position
RETURN properties(s) AS step, links
