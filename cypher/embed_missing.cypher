// A page of the embed job (membrane.EmbedMissing): up to $limit records in
// id order after $after, at most $maxLevel sensitive, with no embedding by
// model $model. The first clause matches the records in reach (records_all
// or records_in_scopes); the id order walks the memory_id index, so each
// page starts where the last one ended.
__RECORDS__
WITH m
WHERE m.id > $after AND m.sensitivityLevel <= $maxLevel
  AND NOT EXISTS { (m)-[:HAS_EMBEDDING]->(v:MemoryVector) WHERE v.model = $model }
RETURN properties(m) AS m
ORDER BY m.id
LIMIT $limit
