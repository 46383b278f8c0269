// A record's full audit trail, oldest first. Set :param id => '<record id>'.
MATCH (a:AuditEntry {recordId: $id})
RETURN a.at AS at, a.action AS action, a.actor AS actor, a.rationale AS rationale, a.previous AS previous
ORDER BY a.at, a.id
