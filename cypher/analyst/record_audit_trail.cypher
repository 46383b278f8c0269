// A record's full audit trail, oldest first.
// :param id => '<fact.id>'
MATCH (a:AuditEntry {recordId: $id})
RETURN a.at AS at, a.action AS action, a.actor AS actor, a.rationale AS rationale, a.previous AS previous
ORDER BY a.at, a.id
