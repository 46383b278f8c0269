// Audit entries across records, oldest first, keyset on (at, id).
MATCH (a:AuditEntry)
WHERE ($recordId IS NULL OR a.recordId = $recordId)
  AND ($actor IS NULL OR a.actor = $actor)
  AND ($action IS NULL OR a.action = $action)
  AND ($since IS NULL OR a.at >= $since)
  AND ($until IS NULL OR a.at < $until)
  AND ($afterAt IS NULL OR a.at > $afterAt OR (a.at = $afterAt AND a.id > $afterId))
RETURN properties(a) AS a
ORDER BY a.at, a.id
LIMIT $limit
