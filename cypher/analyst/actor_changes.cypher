// What an actor changed, newest first, with the record it touched.
// Set :param actor => 'agent-1'.
MATCH (a:AuditEntry {actor: $actor})
OPTIONAL MATCH (m:Memory)-[:HAS_AUDIT]->(a)
RETURN a.at AS at, a.action AS action, a.rationale AS rationale, a.recordId AS recordId, m.name AS record
ORDER BY a.at DESC
LIMIT 100
