// One batch of the start-up migration that re-stamps audit entries whose
// copy of their record's level or scope differs from the record's now
// (written before revisions re-stamped them; see audit_restamp). A
// re-stamped entry no longer matches, so batches need no cursor.
MATCH (m:Memory)-[:HAS_AUDIT]->(a:AuditEntry)
WHERE a.sensitivityLevel <> m.sensitivityLevel OR coalesce(a.scope, '') <> coalesce(m.scope, '')
WITH m, a
LIMIT $limit
SET a.sensitivityLevel = m.sensitivityLevel, a.scope = m.scope
RETURN properties(a) AS a, m.sensitivityLevel AS level
