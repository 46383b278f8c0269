// One keyset page of the records of the scopes in $scopes ordered by
// creation time, the default order of a dashboard's listing: each scope's
// records walked in order through memory_scope_created_at (scope,
// createdAt, id) over creation times from $lower to $upper (the filter's
// window narrowed by the cursor's instant: a range on the index, not a
// filter over the records outside it) and stopped at $limit, then the
// scopes' pages merged. A page costs about $limit records per scope, not
// every record of the scopes: records_page seeks the scope index and
// sorts all of a scope's records (30,000 db hits for a page of a
// 10,000-record scope, against 700 here). The ORDER BY is the index's own
// order (m.scope first), so the walk needs no sort, not even of the
// records created at one instant (an ingestBatch's); the hint makes the
// planner seek the composite index rather than the scope index. __DIR__
// is ASC or DESC, __CMP__ the matching > or <.
UNWIND $scopes AS s
WITH DISTINCT s
CALL (s) {
  MATCH (m:Memory)
  USING INDEX m:Memory(scope, createdAt, id)
  WHERE m.scope = s AND m.createdAt >= $lower AND m.createdAt <= $upper AND m.id IS NOT NULL
    AND __FILTER__
    AND __STATE_FILTER__
    AND ($afterKey IS NULL OR m.createdAt __CMP__ $afterKey OR m.id __CMP__ $afterId)
  WITH m
  ORDER BY m.scope __DIR__, m.createdAt __DIR__, m.id __DIR__
  LIMIT $limit
  RETURN m
}
WITH m
ORDER BY m.createdAt __DIR__, m.id __DIR__
LIMIT $limit
RETURN properties(m) AS props
