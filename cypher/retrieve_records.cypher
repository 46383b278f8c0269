// The records of $ids that the request sees in full: the hits and selected
// records of a retrieval.
UNWIND $ids AS id
MATCH (m:Memory {id: id})
WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
RETURN properties(m) AS m
