MATCH (m:Memory)
WHERE __FILTER__
  AND __STATE_FILTER__
RETURN count(m) AS n
