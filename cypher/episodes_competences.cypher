// A page of successful episodes with tool calls that no competence was
// learnt from yet, in id order after $after. toolCalls is copied out of the
// payload; records written before it existed are recognised by their
// payload text.
MATCH (m:Memory)
WHERE m.id > $after AND m:Episodic AND ($scopes IS NULL OR m.scope IN $scopes)
  AND m.outcome = 'success'
  AND (m.toolCalls > 0 OR (m.toolCalls IS NULL AND m.payload CONTAINS '"tool_graph"'))
  AND NOT EXISTS { (m)<-[:DERIVED_FROM]-(:Competence) }
RETURN properties(m) AS m
ORDER BY m.id
LIMIT $limit
