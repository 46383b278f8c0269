__MATCH__
WHERE m.createdAt <= $asOf
  AND __FILTER__
CALL (m) {
  __AS_OF__
}
WITH v
WHERE __STATE_FILTER__
RETURN count(v) AS n
