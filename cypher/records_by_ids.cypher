MATCH (m:Memory)
WHERE m.id IN $ids
RETURN properties(m) AS m
