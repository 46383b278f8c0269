// A batch of records for the search terms migration: the first $limit
// records in id order after $after, each with what its terms are made of
// when they are older than $version (null when current). Keyset order by
// the memory_id constraint's index, so the whole pass reads each record once.
MATCH (m:Memory)
WHERE m.id > $after
WITH m
ORDER BY m.id
LIMIT $limit
RETURN m.id AS id,
       CASE WHEN coalesce(m.searchTermsVersion, 0) < $version
         THEN {type: m.type, scope: m.scope, payload: m.payload, encrypted: coalesce(m.encrypted, false)}
       END AS stale
