// Migration audit_refs: the next $limit audit entries after id $after, in
// id order, that may name other records in text (written before audit
// references): a delete tombstone's removedEdges, a rationale beginning
// with one of $prefixes (membrane.LegacyRationalePrefixes), any relate
// entry, and sealed rationales (read in Go). Entries already migrated have
// refIds (possibly empty) and are not read again. $scopes (null: all)
// restricts the pass to entries of those scopes (tests share a database).
MATCH (a:AuditEntry)
WHERE a.id > $after AND a.refIds IS NULL AND ($scopes IS NULL OR a.scope IN $scopes)
  AND (a.removedEdges IS NOT NULL OR a.action = 'relate' OR a.rationale STARTS WITH $sealed
       OR any(p IN $prefixes WHERE a.rationale STARTS WITH p))
WITH a ORDER BY a.id LIMIT $limit
RETURN properties(a) AS props
ORDER BY a.id
