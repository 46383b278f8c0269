// The sensitivity level and scope of each id in $ids that names a record,
// or a deleted record (from its latest audit entry, its delete tombstone;
// null when a DeletedRecordId has no entry left): provenance sources are
// gated on them (membrane.Trust.GateProvenance). No row for other ids.
UNWIND $ids AS id
OPTIONAL MATCH (m:Memory {id: id})
OPTIONAL CALL (id, m) {
  WITH id WHERE m IS NULL
  MATCH (t:AuditEntry {recordId: id})
  WHERE t.at IS NOT NULL AND t.sensitivityLevel IS NOT NULL
  RETURN t ORDER BY t.at DESC LIMIT 1
}
WITH id, m, t
WHERE m IS NOT NULL OR t IS NOT NULL OR EXISTS { MATCH (:DeletedRecordId {id: id}) }
RETURN id, coalesce(m.sensitivityLevel, t.sensitivityLevel) AS level,
       CASE WHEN m IS NOT NULL THEN coalesce(m.scope, '') ELSE coalesce(t.scope, '') END AS scope
