// A record as it was at $asOf (absent when created later).
MATCH (m:Memory {id: $id})
WHERE ($asOf IS NULL OR m.createdAt <= $asOf)
  AND m.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
CALL (m) {
  __AS_OF__
}
RETURN v AS m
