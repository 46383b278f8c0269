// A plan graph record with its steps and their NEXT / DATA edges, and the
// episode it was extracted from, as a graph.
// :param id => '<plan.id>'
MATCH (plan:PlanGraph {id: $id})-[h:HAS_STEP]->(s:PlanStep)
OPTIONAL MATCH (s)-[l:NEXT|DATA]->(t:PlanStep)
OPTIONAL MATCH (plan)-[d:DERIVED_FROM]->(ep:Episodic)
RETURN plan, h, s, l, t, d, ep
