// The change feed's head: the last sequence number given out, and whether
// committed audit entries are waiting for one. Read by every server's
// change-feed loop each tick, so it must stay cheap: one node by its
// constraint and at most one row of the Unsequenced label scan.
OPTIONAL MATCH (s:AuditSequence {id: 'audit'})
RETURN coalesce(s.last, 0) AS head,
       EXISTS { MATCH (a:Unsequenced) } AS pending,
       s IS NOT NULL AS started
