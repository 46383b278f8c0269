// Trust gate: visible in full or redacted (one level above the ceiling).
MATCH (m:Memory {id: $id})
WHERE m.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
RETURN properties(m) AS m
