// The first $limit audit entries (oldest first) of each record in $ids, in
// one round trip: the batch behind Record.auditLog.
UNWIND $ids AS rid
CALL (rid) {
  MATCH (a:AuditEntry {recordId: rid})
  WHERE a.sensitivityLevel <= $ceiling AND ($allScopes OR a.scope = '' OR a.scope IN $trustScopes)
    AND ($afterAt IS NULL OR a.at > $afterAt OR (a.at = $afterAt AND a.id > $afterId))
  RETURN a
  ORDER BY a.at, a.id
  LIMIT $limit
}
// refNow: as in audit_page.
CALL (a) {
  UNWIND coalesce(a.refIds, []) AS ref
  OPTIONAL MATCH (o:Memory {id: ref})
  RETURN collect([ref, o.sensitivityLevel, o.scope]) AS refNow
}
RETURN rid, collect(a {.*, refNow: refNow}) AS entries
