// Invariant: every supersede chain of the scope is a line with one head.
// A record is superseded at most once and is retracted when it is, and a
// record supersedes at most one other; so following SUPERSEDES backwards
// from any record ends at exactly one record nobody superseded (the head).
// Two concurrent supersedes of one record would break the first rule.
// Returns one row per violation; none when the invariant holds.
CALL {
  MATCH (old:Memory {scope: $scope})<-[:SUPERSEDES]-(n:Memory)
  WITH old, count(n) AS successors
  WHERE successors > 1 OR old.status <> 'retracted'
  RETURN 'record ' + old.id + ' superseded by ' + toString(successors) + ' records, status ' + old.status AS violation
  UNION ALL
  MATCH (n:Memory {scope: $scope})-[:SUPERSEDES]->(old:Memory)
  WITH n, count(old) AS predecessors
  WHERE predecessors > 1
  RETURN 'record ' + n.id + ' supersedes ' + toString(predecessors) + ' records' AS violation
}
RETURN violation
LIMIT 20
