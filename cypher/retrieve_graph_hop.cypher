// One hop of retrieveGraph: the edges of the relation vocabulary ($types)
// of each record of $frontier, in both directions, to the records at their
// other end. Trust gate: only records seen in full are expanded ($frontier
// holds only those, and the gate is checked again here); the other end may
// be seen in full or redacted, never invisible, so an invisible record's
// id, edges and predicates never leave the database. At most $fanout edges
// per record (a hub costs no more than that) and $rowLimit in all.
// Records already in the result ($seen) come without their properties.
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
RETURN a.id AS from, startNode(r) = a AS outgoing, type(r) AS type, r.weight AS weight, r.createdAt AS createdAt,
       r.actor AS actor, x.id AS id, CASE WHEN x.id IN $seen THEN null ELSE properties(x) END AS props
