// One keyset page of records as they were at $asOf: records created since
// are left out, and status and salience filters and ordering apply to the
// values they had then (see as_of.cypher).
__MATCH__
WHERE m.createdAt <= $asOf
  AND __FILTER__
CALL (m) {
  __AS_OF__
}
WITH v
WHERE __STATE_FILTER__
  AND ($afterKey IS NULL
       OR v.__FIELD__ __CMP__ $afterKey
       OR (v.__FIELD__ = $afterKey AND v.id __CMP__ $afterId))
RETURN v AS m
ORDER BY v.__FIELD__ __DIR__, v.id __DIR__
LIMIT $limit
