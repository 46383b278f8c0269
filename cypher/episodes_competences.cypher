// A page of successful episodes with tool calls that no competence was
// learnt from yet, in id order after $after (see episodes_facts and, for
// the CASE, episodes_plans).
MATCH (m:Memory)
USING INDEX m:Memory(id)
WHERE m.id > $after AND m.type = 'episodic' AND ($scopes IS NULL OR m.scope IN $scopes)
  AND m.outcome = 'success'
  AND CASE WHEN m.toolCalls IS NULL THEN m.payload CONTAINS '"tool_graph"' ELSE m.toolCalls > 0 END
  AND NOT EXISTS { (m)<-[:DERIVED_FROM]-(:Competence) }
RETURN properties(m) AS props
ORDER BY m.id
LIMIT $limit
