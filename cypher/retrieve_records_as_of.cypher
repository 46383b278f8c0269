// The records of $ids that the request sees in full, as they were at
// $asOf: the hits and selected records of a retrieval as of an instant.
UNWIND $ids AS id
MATCH (m:Memory {id: id})
WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
CALL (m) {
  __AS_OF__
}
RETURN v AS m
