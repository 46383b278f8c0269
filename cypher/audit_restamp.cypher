// Re-stamps the audit entries of the records $ids with their record's
// level and scope now: entries are gated on their copy (so that a deleted
// record's tombstone stays gated), and a revision that raised a record or
// moved it in place must not leave its earlier entries readable at the old
// level or scope. Returns the re-stamped entries and the record's level,
// so that the caller seals their free text when the level now requires it.
MATCH (m:Memory)-[:HAS_AUDIT]->(a:AuditEntry)
WHERE m.id IN $ids
  AND (a.sensitivityLevel <> m.sensitivityLevel OR coalesce(a.scope, '') <> coalesce(m.scope, ''))
SET a.sensitivityLevel = m.sensitivityLevel, a.scope = m.scope
RETURN properties(a) AS a, m.sensitivityLevel AS level
