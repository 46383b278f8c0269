// Whether the database holds data: a record, or an audit entry (one that
// outlived its record). One row if so, none if not: each branch stops at
// the first node it finds, so a start that asks scans nothing. $scopes
// narrows the records looked at to those scopes (null: all) and then leaves
// audit entries out, so that a test stands in for an empty database.
MATCH (m:Memory)
WHERE $scopes IS NULL OR m.scope IN $scopes
RETURN true AS used
LIMIT 1
UNION
MATCH (:AuditEntry)
WHERE $scopes IS NULL
RETURN true AS used
LIMIT 1
