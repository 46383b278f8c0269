MATCH (m:Memory {id: $id})
RETURN properties(m) AS m
