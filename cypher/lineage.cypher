// Lineage of one record: every record reachable over edges of $types in
// the direction __ARROW__ within __MAXDEPTH__ hops, each with its depth
// (shortest distance), and the edges among them. __ARROW__, __WALK__ and
// __MAXDEPTH__ come from a fixed set of arrows and a validated integer.
// Trust gate: the traversal only expands from records seen in full, may
// reach records seen redacted, and never reaches invisible ones, so it
// cannot reveal their ids, edges or predicates.
MATCH (root:Memory {id: $id})
WHERE ($asOf IS NULL OR root.createdAt <= $asOf)
  AND root.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR root.scope = '' OR root.scope IN $trustScopes)
// The records seen in full that a walk through records seen in full
// reaches, root included in the walk (so a redacted root reaches nothing).
// Every node and relationship predicate holds for the whole path, so the
// planner walks breadth first and keeps each record once, at its shortest
// distance (VarLengthExpand(Pruning,BFS)): linear in what is reached. A
// shortest-path search (ANY SHORTEST over a quantified pattern) gave the
// same answer at about twice the cost (docs/BENCHMARKS.md, "A lineage of
// 100").
CALL (root) {
  MATCH p = (root)__WALK__(n:Memory)
  WHERE n <> root
    AND all(r IN relationships(p) WHERE type(r) IN $types AND ($asOf IS NULL OR r.createdAt <= $asOf))
    AND all(x IN nodes(p) WHERE x:Memory AND x.sensitivityLevel <= $ceiling
      AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes) AND ($asOf IS NULL OR x.createdAt <= $asOf))
  WITH n, min(length(p)) AS depth
  RETURN collect({n: n, depth: depth}) AS walked
}
// The records seen redacted one hop past a record seen in full (root, if
// seen in full, at depth 0): shown, never expanded.
CALL (root, walked) {
  UNWIND [f IN walked WHERE f.depth < __MAXDEPTH__]
    + CASE WHEN root.sensitivityLevel <= $ceiling THEN [{n: root, depth: 0}] ELSE [] END AS f
  WITH f.n AS a, f.depth AS d
  MATCH (a)__ARROW__(x:Memory)
  WHERE x.sensitivityLevel = $ceiling + 1 AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
    AND ($asOf IS NULL OR (r.createdAt <= $asOf AND x.createdAt <= $asOf))
  WITH x, min(d) + 1 AS depth
  RETURN collect({n: x, depth: depth}) AS redacted
}
CALL (walked, redacted) {
  UNWIND walked + redacted AS f
  WITH f.n AS n, f.depth AS depth
  ORDER BY depth, n.id
  LIMIT $limit
  RETURN collect({m: n, depth: depth}) AS found
}
WITH root, [{m: root, depth: 0}] + found AS found
WITH found, [f IN found | f.m] AS ms
CALL (ms) {
  UNWIND ms AS a
  MATCH (a)-[r:$any($types)]->(b:Memory)
  WHERE b IN ms AND ($asOf IS NULL OR r.createdAt <= $asOf)
    // A redacted record has no relations of its own: an edge is shown only
    // when one of its ends is seen in full.
    AND (a.sensitivityLevel <= $ceiling OR b.sensitivityLevel <= $ceiling)
  WITH a, b, r
  LIMIT $edgeLimit
  RETURN collect({from: a.id, to: b.id, type: type(r), weight: r.weight, createdAt: r.createdAt, actor: r.actor}) AS edges
}
UNWIND found AS f
WITH f.m AS m, f.depth AS depth, edges
CALL (m) {
  __AS_OF__
}
WITH v, depth, edges
ORDER BY depth, v.id
RETURN collect({node: v, depth: depth}) AS nodes, edges
