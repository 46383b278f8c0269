// Invariants: every supersede chain of the scope is a line with one head,
// and every session chain (NEXT) is a line in time order.
//
// Supersede chains:
// A record is superseded at most once and has status superseded when it is, and a
// record supersedes at most one other; so following SUPERSEDES backwards
// from any record ends at exactly one record nobody superseded (the head).
// Two concurrent supersedes of one record would break the first rule.
// Session chains (session_link): a record has at most one NEXT either
// way; NEXT joins two records of the same scope and session, the earlier
// (sessionAt, then id) to the later; and a record of a session that has
// an earlier one has a predecessor (no chain is cut in two).
// Returns one row per violation; none when the invariant holds.
CALL {
  MATCH (old:Memory {scope: $scope})<-[:SUPERSEDES]-(n:Memory)
  WITH old, count(n) AS successors
  WHERE successors > 1 OR old.status <> 'superseded'
  RETURN 'record ' + old.id + ' superseded by ' + toString(successors) + ' records, status ' + old.status AS violation
  UNION ALL
  MATCH (n:Memory {scope: $scope})-[:SUPERSEDES]->(old:Memory)
  WITH n, count(old) AS predecessors
  WHERE predecessors > 1
  RETURN 'record ' + n.id + ' supersedes ' + toString(predecessors) + ' records' AS violation
  UNION ALL
  MATCH (a:Memory {scope: $scope})-[:NEXT]->(b:Memory)
  WHERE b.scope <> a.scope OR b.sessionKey IS NULL OR a.sessionKey IS NULL OR b.sessionKey <> a.sessionKey
     OR b.sessionAt < a.sessionAt OR (b.sessionAt = a.sessionAt AND b.id <= a.id)
  RETURN 'NEXT from ' + a.id + ' to ' + b.id + ' is not to the following episode of its session' AS violation
  UNION ALL
  MATCH (a:Memory {scope: $scope})
  WHERE a.sessionKey IS NOT NULL
  WITH a, COUNT { (a)-[:NEXT]->() } AS outs, COUNT { ()-[:NEXT]->(a) } AS ins
  WHERE outs > 1 OR ins > 1 OR (ins = 0 AND EXISTS {
    MATCH (p:Memory)
    WHERE p.scope = a.scope AND p.sessionKey = a.sessionKey AND p.sessionAt <= a.sessionAt AND p <> a
      AND (p.sessionAt < a.sessionAt OR p.id < a.id) })
  RETURN 'episode ' + a.id + ' has ' + toString(outs) + ' next and ' + toString(ins) + ' previous episodes in its session' AS violation
}
RETURN violation
LIMIT 20
