// A page of successful episodes no fact was extracted from yet (no
// Semantic record DERIVED_FROM them), in id order after $after: the
// DERIVED_FROM edges consolidation writes are what marks an episode done.
// The hint walks the memory_id index in id order, so a page stops after
// $limit matches without a sort; the type is matched as a property, not a
// label, because with the label the planner joins a scan of every episode
// and sorts it, for every page.
MATCH (m:Memory)
USING INDEX m:Memory(id)
WHERE m.id > $after AND m.type = 'episodic' AND ($scopes IS NULL OR m.scope IN $scopes)
  AND m.outcome = 'success'
  AND NOT EXISTS { (m)<-[:DERIVED_FROM]-(:Semantic) }
RETURN properties(m) AS props
ORDER BY m.id
LIMIT $limit
