// Migration audit_refs: the sensitivity level and scope of each record in
// $ids, from the record, or when it is gone from its latest audit entry
// (its delete tombstone); no row when neither exists.
UNWIND $ids AS id
OPTIONAL MATCH (m:Memory {id: id})
OPTIONAL CALL (id, m) {
  WITH id WHERE m IS NULL
  MATCH (t:AuditEntry {recordId: id})
  WHERE t.at IS NOT NULL AND t.sensitivityLevel IS NOT NULL
  RETURN t ORDER BY t.at DESC LIMIT 1
}
WITH id, m, t
WHERE m IS NOT NULL OR t IS NOT NULL
RETURN id, coalesce(m.sensitivityLevel, t.sensitivityLevel) AS level,
       CASE WHEN m IS NOT NULL THEN coalesce(m.scope, '') ELSE coalesce(t.scope, '') END AS scope
