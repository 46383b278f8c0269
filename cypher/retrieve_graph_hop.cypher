// One hop of retrieveGraph: the edges of the relation vocabulary ($types)
// of each record of $frontier, in both directions, to the records at their
// other end. Trust gate: only records seen in full are expanded ($frontier
// holds only those, and the gate is checked again here); the other end may
// be seen in full or redacted, never invisible, so an invisible record's
// id, edges and predicates never leave the database. At most $fanout edges
// per record (a hub costs no more than that) and $rowLimit in all.
//
// Of the records reached that are not in the result yet ($seen), the first
// $budget (in frontier order, so the best roots' neighbours first) join it
// and come with their properties; edges are returned only between records
// of the result. more is true when the budget, $fanout or $rowLimit may
// have left records or edges out.
UNWIND $frontier AS fid
MATCH (a:Memory {id: fid})
WHERE a.sensitivityLevel <= $ceiling AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
CALL (a) {
  MATCH (a)-[r:$any($types)]-(x:Memory)
  WHERE x.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR x.scope = '' OR x.scope IN $trustScopes)
  RETURN r, x
  LIMIT $fanout
}
WITH a, r, x
LIMIT $rowLimit
WITH collect({a: a.id, r: r, x: x}) AS rows
CALL (rows) {
  UNWIND rows AS row
  WITH row.x AS x
  WHERE NOT x.id IN $seen
  WITH DISTINCT x
  LIMIT $budget
  RETURN collect(x) AS fresh
}
RETURN
  [row IN rows WHERE row.x IN fresh OR row.x.id IN $seen | {
    from: row.a, outgoing: startNode(row.r).id = row.a, type: type(row.r), weight: row.r.weight,
    createdAt: row.r.createdAt, actor: row.r.actor, to: row.x.id}] AS edges,
  [x IN fresh | properties(x)] AS nodes,
  any(row IN rows WHERE NOT row.x.id IN $seen AND NOT row.x IN fresh)
    OR size(rows) >= $rowLimit
    OR any(f IN $frontier WHERE size([row IN rows WHERE row.a = f]) >= $fanout) AS more
