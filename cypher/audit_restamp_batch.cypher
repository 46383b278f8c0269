// One batch of the start-up migration that re-stamps audit entries whose
// copy of their record's level or scope differs from the record's now
// (written before revisions re-stamped them; see audit_restamp). A
// re-stamped entry no longer matches, so batches need no cursor. $scopes
// narrows it to the records of those scopes (null: all), so that a test
// re-runs it over its own records without touching the shared Migration
// node.
MATCH (m:Memory)-[:HAS_AUDIT]->(a:AuditEntry)
WHERE ($scopes IS NULL OR m.scope IN $scopes)
  AND (a.sensitivityLevel <> m.sensitivityLevel OR coalesce(a.scope, '') <> coalesce(m.scope, ''))
WITH m, a
LIMIT $limit
SET a.sensitivityLevel = m.sensitivityLevel, a.scope = m.scope
RETURN properties(a) AS a, m.sensitivityLevel AS level
