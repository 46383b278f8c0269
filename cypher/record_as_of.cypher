// A record as it was at $asOf (absent when created later).
MATCH (m:Memory {id: $id})
WHERE $asOf IS NULL OR m.createdAt <= $asOf
CALL (m) {
  __AS_OF__
}
RETURN v AS m
