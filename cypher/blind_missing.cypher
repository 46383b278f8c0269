// A batch of sealed records without blind terms (written before the blind
// index existed), after id $after in id order: the migration computes
// their terms in Go (membrane.Sealer.BlindTerms) and writes them with
// blind_set. Records it cannot open are passed over by the keyset.
MATCH (m:Memory)
WHERE m.encrypted = true AND m.blindKeyId IS NULL AND m.id > $after
WITH m
ORDER BY m.id
LIMIT $limit
RETURN properties(m) AS m
