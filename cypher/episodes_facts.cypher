// A page of successful episodes no fact was extracted from yet (no
// Semantic record DERIVED_FROM them), in id order after $after: the
// DERIVED_FROM edges consolidation writes are what marks an episode done.
// Walking the memory_id index in order keeps each page an index seek.
MATCH (m:Memory)
WHERE m.id > $after AND m:Episodic AND ($scopes IS NULL OR m.scope IN $scopes)
  AND m.outcome = 'success'
  AND NOT EXISTS { (m)<-[:DERIVED_FROM]-(:Semantic) }
RETURN properties(m) AS m
ORDER BY m.id
LIMIT $limit
