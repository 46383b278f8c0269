// The records related to each record of $ids by edges of $types in the
// chosen directions, as one batch (the data behind Record.supersedes,
// supersededBy, derivedFrom, derivatives, contestedBy, contests and
// relations). Keyset on (edge createdAt, neighbour id); at most $limit + 1
// per record. Edges and neighbours created after $asOf are left out.
// Trust gate: only records seen in full have relations; a neighbour may be
// seen redacted, an invisible one is left out with its edge.
UNWIND $ids AS rid
MATCH (m:Memory {id: rid})
WHERE m.sensitivityLevel <= $ceiling AND ($allScopes OR m.scope = '' OR m.scope IN $trustScopes)
CALL (m) {
  MATCH (m)-[r:$any($types)]->(n:Memory)
  WHERE $out
  RETURN r, n, true AS outgoing
  UNION ALL
  MATCH (m)<-[r:$any($types)]-(n:Memory)
  WHERE $in
  RETURN r, n, false AS outgoing
}
WITH rid, r, n, outgoing
WHERE n.sensitivityLevel <= $ceiling + 1 AND ($allScopes OR n.scope = '' OR n.scope IN $trustScopes)
  AND ($asOf IS NULL OR (r.createdAt <= $asOf AND n.createdAt <= $asOf))
  AND ($afterAt IS NULL OR r.createdAt > $afterAt OR (r.createdAt = $afterAt AND n.id > $afterId))
WITH rid, r, n, outgoing
ORDER BY r.createdAt, n.id
WITH rid, collect({type: type(r), weight: r.weight, createdAt: r.createdAt, actor: r.actor, outgoing: outgoing, n: n})[0..$limit] AS rels
UNWIND rels AS rel
WITH rid, rel, rel.n AS m
CALL (m) {
  __AS_OF__
}
RETURN rid, rel {.type, .weight, .createdAt, .actor, .outgoing} AS rel, v AS node
