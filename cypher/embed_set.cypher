// Store the embed job's vectors: each of $vectors ({id, version, vector})
// goes on its record as an embedding by model $model, replacing the
// record's embeddings by other models (their index no longer serves
// queries). version is the one read under the records' locks in the same
// transaction (lock_records), where Go checked that the record's text is
// still the one embedded. A record that changed since (another version),
// rose above $maxLevel, was deleted, or got an embedding by $model
// meanwhile is left as it is. Returns how many records got a vector.
UNWIND $vectors AS x
MATCH (m:Memory {id: x.id})
WHERE m.version = x.version AND m.sensitivityLevel <= $maxLevel
  AND NOT EXISTS { (m)-[:HAS_EMBEDDING]->(v:MemoryVector) WHERE v.model = $model }
CALL (m) {
  OPTIONAL MATCH (m)-[:HAS_EMBEDDING]->(old:MemoryVector)
  DETACH DELETE old
}
CREATE (m)-[:HAS_EMBEDDING]->(e:MemoryVector:Bookkeeping {model: $model, createdAt: m.createdAt})
WITH e, x
// 32-bit floats, as create_records stores them.
CALL db.create.setNodeVectorProperty(e, 'vector', x.vector)
RETURN count(*) AS changed
