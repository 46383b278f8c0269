// Graph around a set of roots ($ids): every record reachable from one of
// them over edges of $types in the direction __ARROW__ within __HOPS__
// hops, each with its depth (shortest distance from the nearest root), and
// the edges among them. __ARROW__, __WALK__ and __HOPS__ come from a fixed
// set of arrows and a validated integer. The roots found are the nodes at depth 0
// (no row when none is), so the caller answers NOT_FOUND for a root that
// is missing or invisible.
// Trust gate, as in lineage.cypher: the traversal only expands from records
// seen in full, may reach records seen redacted, and never reaches
// invisible ones, so it cannot reveal their ids, edges or predicates. The
// walk is lineage.cypher's: breadth first through records seen in full
// (VarLengthExpand(Pruning,BFS) from each root), then one hop to records
// seen redacted.
OPTIONAL MATCH (root:Memory)
WHERE root.id IN $ids
  AND ($asOf IS NULL OR root.createdAt <= $asOf)
  AND root.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR root.scope = '' OR root.scope IN $trustScopes)
WITH collect(root) AS roots
CALL (roots) {
  UNWIND roots AS root
  MATCH p = (root)__WALK__(n:Memory)
  WHERE NOT n IN roots
    AND all(r IN relationships(p) WHERE type(r) IN $types AND ($asOf IS NULL OR r.createdAt <= $asOf))
    AND all(x IN nodes(p) WHERE x:Memory AND x.sensitivityLevel <= $ceiling
      AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes) AND ($asOf IS NULL OR x.createdAt <= $asOf))
  WITH root, n, min(length(p)) AS depth
  WITH n, min(depth) AS depth
  RETURN collect({n: n, depth: depth}) AS walked
}
CALL (roots, walked) {
  UNWIND [f IN walked WHERE f.depth < __HOPS__]
    + [r IN roots WHERE r.sensitivityLevel <= $ceiling | {n: r, depth: 0}] AS f
  WITH f.n AS a, f.depth AS d
  MATCH (a)__ARROW__(x:Memory)
  WHERE x.sensitivityLevel = $ceiling + 1 AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
    AND ($asOf IS NULL OR (r.createdAt <= $asOf AND x.createdAt <= $asOf)) AND NOT x IN roots
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
WITH [r IN roots | {m: r, depth: 0}] + found AS found
WITH found, [f IN found | f.m] AS ms
CALL (ms) {
  UNWIND ms AS a
  MATCH (a)-[r:$any($types)]->(b:Memory)
  WHERE b IN ms AND ($asOf IS NULL OR r.createdAt <= $asOf)
    // A redacted record has no relations of its own: an edge is shown only
    // when one of its ends is seen in full.
    AND (a.sensitivityLevel <= $ceiling OR b.sensitivityLevel <= $ceiling)
  WITH a, b, r
  ORDER BY a.id, type(r), b.id
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
