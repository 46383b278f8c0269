// Create records and their create audit entries, one row per record.
// $records: [{id, label, props, audit}]. The label comes from the fixed
// type vocabulary; a duplicate id fails the whole transaction on memory_id.
UNWIND $records AS r
CREATE (m:Memory {id: r.id})
SET m += r.props
SET m:$(r.label)
CREATE (a:AuditEntry)
SET a = r.audit, a.scope = m.scope, a.sensitivityLevel = m.sensitivityLevel
CREATE (m)-[:HAS_AUDIT]->(a)
RETURN count(*) AS created
