// Prune: delete the records in reach that internal/membrane.Prunable
// allows, each leaving a tombstone audit entry (action delete, found by
// recordId with the rest of its trail), in batches of $batch rows per
// transaction. A record is deleted only when it is auto_prune, not
// pinned, its effective salience at $now is below $floor, and it is not
// part of revision history (retracted, contested or linked by a lineage
// edge either way) unless it last changed at or before $historyCutoff
// (null: history is kept forever). Each deleted id leaves its tombstone
// (DeletedRecordId), so it is never used again. The first clause matches the records in
// reach; the inner CALL computes eff (effective_salience). The tombstone's
// previous is JSON built from fixed-vocabulary and numeric values only, so
// nothing in it needs escaping; the ref* lists name the edges removed
// (membrane.EdgeRef: removed_edge_out/in, the other record's id, the
// predicate, and the other record's level and scope for gating), the
// first $maxRefs of them (membrane.MaxAuditRefs), refsOmitted the rest.
__RECORDS__
CALL (m) {
  WITH m
  WHERE m.deletionPolicy = 'auto_prune' AND NOT coalesce(m.pinned, false)
  CALL (m) {
    __EFFECTIVE__
  }
  WITH m, eff
  WHERE eff < $floor
    AND ((m.status = 'active' AND NOT EXISTS { (m)-[:SUPERSEDES|DERIVED_FROM|CONTESTED_BY]-(:Memory) })
         OR ($historyCutoff IS NOT NULL AND m.updatedAt <= $historyCutoff))
  OPTIONAL MATCH (m)-[r]-(o:Memory)
  WITH m, eff, collect(CASE WHEN r IS NULL THEN null ELSE {
    role: CASE WHEN startNode(r) = m THEN 'removed_edge_out' ELSE 'removed_edge_in' END,
    id: o.id, pred: toLower(type(r)), level: o.sensitivityLevel, scope: coalesce(o.scope, '')} END) AS edges
  OPTIONAL MATCH (m)-[:HAS_STEP]->(s:PlanStep)
  WITH m, eff, edges, collect(s) AS steps
  OPTIONAL MATCH (m)-[:HAS_EMBEDDING]->(v:MemoryVector)
  WITH m, eff, edges, steps, collect(v) AS vectors
  // Its session neighbours close the gap it leaves (session_link).
  CALL (m) {
    MATCH (p:Memory)-[:NEXT]->(m)-[:NEXT]->(n:Memory)
    CREATE (p)-[:NEXT {weight: 1.0, createdAt: n.createdAt, actor: n.provenanceCreatedBy}]->(n)
  }
  CREATE (a:AuditEntry:Unsequenced {
    id: randomUUID(), recordId: m.id, action: 'delete', actor: $actor, at: $now,
    caption: 'delete by ' + $actor + ' at ' + toString(datetime({epochSeconds: $now.epochSeconds})),
    scope: m.scope, sensitivityLevel: m.sensitivityLevel, recordType: m.type,
    rationale: 'auto-pruned: effective salience ' + toString(eff) + ' is below the prune floor ' + toString($floor),
    prevStatus: m.status, prevSalience: m.salience,
    refRoles: [e IN edges[0..$maxRefs] | e.role], refIds: [e IN edges[0..$maxRefs] | e.id],
    refPredicates: [e IN edges[0..$maxRefs] | e.pred], refLevels: [e IN edges[0..$maxRefs] | e.level],
    refScopes: [e IN edges[0..$maxRefs] | e.scope],
    refsOmitted: CASE WHEN size(edges) > $maxRefs THEN size(edges) - $maxRefs END,
    previous: '{"type":"' + m.type + '","status":"' + m.status + '","salience":' + toString(m.salience)
      + ',"baseSalience":' + toString(coalesce(m.baseSalience, m.salience)) + ',"version":' + toString(m.version) + '}'
  })
  FOREACH (s IN steps | DETACH DELETE s)
  FOREACH (v IN vectors | DETACH DELETE v)
  MERGE (t:DeletedRecordId {id: m.id})
  ON CREATE SET t:Bookkeeping
  DETACH DELETE m
  RETURN count(*) AS deleted
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS scanned, sum(deleted) AS changed
