// Migration audit_refs: write each entry's references and stripped
// rationale; the text removedEdges gives way to the references.
UNWIND $rows AS row
MATCH (a:AuditEntry {id: row.id})
SET a += row.props
REMOVE a.removedEdges
RETURN count(*) AS n
