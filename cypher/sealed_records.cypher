// A batch of encrypted records with a value sealed under key $prefix
// ('mbx1:<key id>:') or blind terms computed under key $keyId, for
// resealing (and recomputing the blind terms and keyed digests) under the
// active key, after id $after in id order: a record that does not open
// under the key stays as it is, and the next batch starts past it.
// digestKeyId: keyed lookup digests computed under $keyId.
MATCH (m:Memory)
WHERE m.encrypted = true AND m.id > $after
  AND (m.payload STARTS WITH $prefix OR m.provenanceSources STARTS WITH $prefix
       OR any(e IN coalesce(m.contestEvidence, []) WHERE e STARTS WITH $prefix)
       OR m.blindKeyId = $keyId OR m.digestKeyId = $keyId)
WITH m
ORDER BY m.id
LIMIT $limit
RETURN properties(m) AS m
