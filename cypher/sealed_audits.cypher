// A batch of audit entries with free text sealed under key $prefix.
MATCH (a:AuditEntry)
WHERE a.rationale STARTS WITH $prefix OR a.previous STARTS WITH $prefix OR a.actorDetail STARTS WITH $prefix
RETURN properties(a) AS a
LIMIT $limit
