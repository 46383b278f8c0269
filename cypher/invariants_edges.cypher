// Invariant: every revision edge between records of the scope has the audit
// entries of the revision that wrote it, stamped with the edge's own instant
// (a revision writes its edges and audit entries in one transaction, with
// one clock reading):
//   (new)-[:SUPERSEDES]->(old)    new: create,  old: supersede
//   (new)-[:DERIVED_FROM]->(src)  new: create,  src: fork or merge
//                                 (captureMemory: fact and capture, both create)
//   (rec)-[:CONTESTED_BY]->(by)   rec: contest, by: contest
// Returns one row per violation; none when the invariant holds.
MATCH (a:Memory {scope: $scope})-[e:SUPERSEDES|DERIVED_FROM|CONTESTED_BY]->(b:Memory)
WITH a, e, b,
     CASE type(e)
       WHEN 'SUPERSEDES' THEN {from: ['create'], to: ['supersede']}
       WHEN 'DERIVED_FROM' THEN {from: ['create'], to: ['fork', 'merge', 'create']}
       ELSE {from: ['contest'], to: ['contest']}
     END AS want
WITH a, e, b,
     EXISTS { MATCH (a)-[:HAS_AUDIT]->(x:AuditEntry) WHERE x.action IN want.from AND x.at = e.createdAt } AS fromOK,
     EXISTS { MATCH (b)-[:HAS_AUDIT]->(x:AuditEntry) WHERE x.action IN want.to AND x.at = e.createdAt } AS toOK
WHERE NOT fromOK OR NOT toOK
RETURN type(e) + ' ' + a.id + ' -> ' + b.id + ': audit of source ' + toString(fromOK) +
       ', audit of target ' + toString(toOK) AS violation
LIMIT 20
