// One keyset page of records. __FIELD__ is an indexed property from a fixed
// list, __DIR__ ASC or DESC and __CMP__ the matching > or <. The IS NOT NULL
// predicate lets the planner walk the range index in order and stop early.
// ORDER BY must name the node m, not the returned map: were the map aliased
// m, every matching record's properties would be built before sorting.
// The MATCH placeholder binds m: every record (records_match_all) or the records
// matching a text filter (records_match_text).
__MATCH__
WHERE m.__FIELD__ IS NOT NULL
  AND __FILTER__
  AND __STATE_FILTER__
  AND ($afterKey IS NULL
       OR m.__FIELD__ __CMP__ $afterKey
       OR (m.__FIELD__ = $afterKey AND m.id __CMP__ $afterId))
RETURN properties(m) AS props
ORDER BY m.__FIELD__ __DIR__, m.id __DIR__
LIMIT $limit
