// The first $limit audit entries of each record in $ids, oldest first
// (__DIR__ ASC, __AFTER__ >) or newest first (DESC, <), in one round trip:
// the batch behind Record.auditLog.
UNWIND $ids AS rid
CALL (rid) {
  // a.at IS NOT NULL (every entry has it) lets the planner seek the
  // (recordId, at) index; without it, it may scan every entry per id.
  MATCH (a:AuditEntry {recordId: rid})
  WHERE a.at IS NOT NULL AND a.sensitivityLevel <= $ceiling AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
    AND ($afterAt IS NULL OR a.at __AFTER__ $afterAt OR (a.at = $afterAt AND a.id __AFTER__ $afterId))
  RETURN a
  ORDER BY a.at __DIR__, a.id __DIR__
  LIMIT $limit
}
RETURN rid, collect(properties(a)) AS entries
