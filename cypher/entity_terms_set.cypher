// Store the terms of entities computed in Go (migration).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.terms = row.terms
RETURN count(e) AS n
