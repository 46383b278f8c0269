// The schema version the database records (the MembraneSchema node $node:
// 'membrane', another name only in tests), and whether it holds data: a
// record, or an audit entry (one that outlived its record). A start checks
// it; it stops at the first node it finds, so it scans nothing. $scopes
// narrows the records looked at to those scopes (null: all) and then leaves
// audit entries out, so that a test stands in for an empty database.
OPTIONAL MATCH (s:MembraneSchema {id: $node})
RETURN s.version AS version,
       EXISTS { MATCH (m:Memory) WHERE $scopes IS NULL OR m.scope IN $scopes }
         OR ($scopes IS NULL AND EXISTS { MATCH (:AuditEntry) }) AS used
