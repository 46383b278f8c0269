// For each record of $ids, its whole supersede chain (oldest first, at
// most $limit records within 200 hops): the data behind Record.history and
// Record.current. Supersede only applies to records not yet retracted, so a
// chain has no branches.
UNWIND $ids AS rid
MATCH (r:Memory {id: rid})
CALL (r) {
  MATCH (r)(()-[e:SUPERSEDES]-() WHERE $asOf IS NULL OR e.createdAt <= $asOf){0,200}(x:Memory)
  RETURN DISTINCT x
}
WITH rid, x AS m
ORDER BY m.createdAt, m.id
WITH rid, collect(m)[0..$limit] AS chain
UNWIND chain AS m
CALL (m) {
  __AS_OF__
}
RETURN rid, collect(v) AS chain
