// A batch of sealed records whose blind terms are missing (written before
// the blind index) or older than analysis $version, after id $after in id
// order: the migration computes their terms in Go
// (membrane.Sealer.BlindTerms) and writes them with blind_set. Records it
// cannot open are passed over by the keyset. $scopes narrows it to the
// records of those scopes (null: all), so that a test runs it over its own
// records.
MATCH (m:Memory)
WHERE m.encrypted = true AND coalesce(m.blindTermsVersion, 0) < $version AND m.id > $after
  AND ($scopes IS NULL OR m.scope IN $scopes)
WITH m
ORDER BY m.id
LIMIT $limit
RETURN properties(m) AS m
