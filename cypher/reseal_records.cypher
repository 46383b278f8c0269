UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
SET m += row.props
