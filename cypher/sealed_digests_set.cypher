// Stores what the keyed-digest migration computed ($rows of {id, open,
// factKey, skillKey, blindNames, keyId}): a sealed record loses its
// plaintext entity terms in any case; one the server could open (open)
// gets its keyed digests, one it could not keeps its old digests until a
// server holding its key runs the migration.
UNWIND $rows AS row
MATCH (m:Memory {id: row.id})
REMOVE m.terms
WITH m, row
WHERE row.open
SET m.factKey = CASE WHEN m.factKey IS NULL THEN null ELSE row.factKey END,
    m.skillKey = CASE WHEN m.skillKey IS NULL THEN null ELSE row.skillKey END,
    m.blindNames = CASE WHEN m:Entity THEN row.blindNames ELSE null END,
    m.digestKeyId = row.keyId
RETURN count(m) AS n
