// Sets the blind terms the migration computed for sealed records, unless a
// write since gave them current ones (a write sets them in its transaction).
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
WHERE coalesce(m.blindTermsVersion, 0) < $version
SET m.blindTerms = row.terms, m.blindKeyId = row.keyId, m.blindTermsVersion = $version
RETURN count(m) AS n
