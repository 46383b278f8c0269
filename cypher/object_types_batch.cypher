// Migration semantic_object_types: the next $limit semantic records after
// id $after, in id order, whose object property is text that may stand for
// a number or a boolean ('30', 'true'): written before the property kept
// the payload's type (membrane.BrowserFields), so WHERE m.object > 20 did
// not find them. Go reads the payload to tell a 30 from a "30" meant as
// text. Sealed records are never read: their payload is ciphertext and
// their node has no object property to restore. $scopes narrows the pass
// to those scopes (a test's own); null at start-up: every scope.
MATCH (m:Memory)
WHERE m.id > $after AND m:Semantic AND m.encrypted IS NULL AND ($scopes IS NULL OR m.scope IN $scopes)
  AND m.object IS :: STRING NOT NULL
  AND (m.object IN ['true', 'false'] OR toFloat(m.object) IS NOT NULL)
WITH m ORDER BY m.id LIMIT $limit
RETURN m.id AS id, m.object AS object, m.payload AS payload
ORDER BY id
