// A batch of sealed records whose blind terms are missing (written before
// the blind index) or older than analysis $version, after id $after in id
// order: the migration computes their terms in Go
// (membrane.Sealer.BlindTerms) and writes them with blind_set. Records it
// cannot open are passed over by the keyset.
MATCH (m:Memory)
WHERE m.encrypted = true AND coalesce(m.blindTermsVersion, 0) < $version AND m.id > $after
WITH m
ORDER BY m.id
LIMIT $limit
RETURN properties(m) AS m
