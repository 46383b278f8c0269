// What an actor changed, newest first, with the record it touched. The
// actor is the authenticated principal (actor: "dev" in dev mode, the key's
// actor otherwise); the agent or tool that principal named (an ingest's
// source, a revision's actor argument) is the entry's actorDetail (sealed,
// so not matched here, on entries of encrypted records). Both are matched.
// :param actor => 'agent-1'
MATCH (a:AuditEntry)
WHERE a.actor = $actor OR a.actorDetail = $actor
OPTIONAL MATCH (m:Memory)-[:HAS_AUDIT]->(a)
RETURN a.at AS at, a.action AS action, a.actor AS principal, a.actorDetail AS detail, a.rationale AS rationale,
       a.recordId AS recordId, m.caption AS record
ORDER BY a.at DESC
LIMIT 100
