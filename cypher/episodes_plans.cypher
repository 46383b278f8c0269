// A page of episodes with at least $minSteps tool calls that no plan was
// extracted from yet, in id order after $after.
MATCH (m:Memory)
WHERE m.id > $after AND m:Episodic AND ($scopes IS NULL OR m.scope IN $scopes)
  AND (m.toolCalls >= $minSteps OR (m.toolCalls IS NULL AND m.payload CONTAINS '"tool_graph"'))
  AND NOT EXISTS { (m)<-[:DERIVED_FROM]-(:PlanGraph) }
RETURN properties(m) AS m
ORDER BY m.id
LIMIT $limit
