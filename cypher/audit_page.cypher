// Audit entries across records, oldest first (__DIR__ ASC, __AFTER__ >) or
// newest first (DESC, <), keyset on (at, id). ORDER BY names the node a,
// so properties are built only for the rows returned.
// Trust gate: audit entries carry their record's scope and sensitivity
// (copied when written, so tombstones of deleted records stay gated) and
// are shown only for records seen in full. a.at IS NOT NULL (every entry
// has it) lets the planner walk the audit_at index in order and stop after
// $limit matches; without it, it scans and sorts every entry.
MATCH (a:AuditEntry)
WHERE a.at IS NOT NULL AND a.sensitivityLevel <= $ceiling AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
  AND ($recordId IS NULL OR a.recordId = $recordId)
  AND ($actor IS NULL OR a.actor = $actor)
  AND ($action IS NULL OR a.action = $action)
  AND ($since IS NULL OR a.at >= $since)
  AND ($until IS NULL OR a.at < $until)
  AND ($afterAt IS NULL OR a.at __AFTER__ $afterAt OR (a.at = $afterAt AND a.id __AFTER__ $afterId))
RETURN properties(a) AS props
ORDER BY a.at __DIR__, a.id __DIR__
LIMIT $limit
