// For each record of $ids, its whole supersede chain (oldest first, at
// most $limit records within 200 hops): the data behind Record.history and
// Record.current. Supersede only applies to records not yet retired, so a
// chain has no branches. Trust gate: the walk only passes through records
// seen in full; it may end at a redacted one and never reaches an invisible one.
UNWIND $ids AS rid
MATCH (r:Memory {id: rid})
WHERE r.sensitivityLevel <= $ceiling AND ($allScopes OR r.scope = '' OR r.scope IN $trustScopes)
CALL (r) {
  MATCH (r)((a)-[e:SUPERSEDES]-(b)
      WHERE ($asOf IS NULL OR e.createdAt <= $asOf)
        AND a.sensitivityLevel <= $ceiling AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
        AND b.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR b.scope = '' OR b.scope IN $trustScopes)){0,200}(x:Memory)
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
