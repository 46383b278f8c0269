// Migration semantic_object_types: the typed objects computed in Go, only
// on records still unsealed and holding the text read (a record rewritten
// or sealed meanwhile keeps what its write gave it).
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
WHERE m.encrypted IS NULL AND m.object = row.old
SET m.object = row.object
RETURN count(m) AS n
