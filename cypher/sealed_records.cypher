// A batch of encrypted records with a value sealed under key $prefix
// ('mbx1:<key id>:') or blind terms computed under key $keyId, for
// resealing (and recomputing the blind terms and keyed digests) under the
// active key. digestKeyId: keyed lookup digests computed under $keyId.
MATCH (m:Memory)
WHERE m.encrypted = true
  AND (m.payload STARTS WITH $prefix OR m.provenanceSources STARTS WITH $prefix
       OR any(e IN coalesce(m.contestEvidence, []) WHERE e STARTS WITH $prefix)
       OR m.blindKeyId = $keyId OR m.digestKeyId = $keyId)
RETURN properties(m) AS m
LIMIT $limit
