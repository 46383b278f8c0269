// Stores the records the sealing repair read (seal_repair_missing) as a
// write would now: $rows of {id, props}, props the record's whole stored
// form, sealed (null removes the plaintext copies).
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
SET m += row.props
RETURN count(m) AS n
