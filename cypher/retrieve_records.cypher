// The records of $ids that the request sees in full, as they are or (with
// $asOf) as they were then: the hits and selected records of a retrieval.
UNWIND $ids AS id
MATCH (m:Memory {id: id})
WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
CALL (m) {
  __AS_OF__
}
RETURN v AS m
