// Store the terms of entities computed in Go (migration).
UNWIND $rows AS row
// By the Memory id constraint: Entity alone has no index on id, and a
// label scan per row made the backfill quadratic.
MATCH (e:Memory {id: row.id})
WHERE e:Entity
SET e.terms = row.terms
RETURN count(e) AS n
