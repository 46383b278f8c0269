UNWIND $rows AS row
MATCH (a:AuditEntry {id: row.id})
SET a += row.props
