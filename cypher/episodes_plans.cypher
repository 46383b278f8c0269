// A page of episodes with at least $minSteps tool calls that no plan was
// extracted from yet, in id order after $after (see episodes_facts).
// toolCalls is copied out of the payload; records written before it
// existed are recognised by their payload text. A CASE rather than an OR
// keeps the planner from splitting the index walk in two and sorting.
MATCH (m:Memory)
USING INDEX m:Memory(id)
WHERE m.id > $after AND m.type = 'episodic' AND ($scopes IS NULL OR m.scope IN $scopes)
  AND CASE WHEN m.toolCalls IS NULL THEN m.payload CONTAINS '"tool_graph"' ELSE m.toolCalls >= $minSteps END
  AND NOT EXISTS { (m)<-[:DERIVED_FROM]-(:PlanGraph) }
RETURN properties(m) AS props
ORDER BY m.id
LIMIT $limit
