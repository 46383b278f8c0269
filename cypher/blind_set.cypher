// Sets the blind terms the migration computed for sealed records, unless a
// write since gave them their own (a write sets them in its transaction).
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
WHERE m.blindKeyId IS NULL
SET m.blindTerms = row.terms, m.blindKeyId = row.keyId
RETURN count(m) AS n
