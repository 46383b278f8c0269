MATCH (m:Memory)
WHERE __FILTER__
RETURN count(m) AS n
