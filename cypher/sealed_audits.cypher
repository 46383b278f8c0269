// A batch of audit entries with free text sealed under key $prefix, after
// id $after in id order (an entry that does not open under the key stays
// as it is, and the next batch starts past it).
MATCH (a:AuditEntry)
WHERE a.id > $after
  AND (a.rationale STARTS WITH $prefix OR a.previous STARTS WITH $prefix OR a.actorDetail STARTS WITH $prefix)
WITH a
ORDER BY a.id
LIMIT $limit
RETURN properties(a) AS a
