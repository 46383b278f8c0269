// A batch of encrypted records with a value sealed under key $prefix
// ('mbx1:<key id>:'), for resealing under the active key.
MATCH (m:Memory)
WHERE m.encrypted = true
  AND (m.payload STARTS WITH $prefix OR m.provenanceSources STARTS WITH $prefix
       OR any(e IN coalesce(m.contestEvidence, []) WHERE e STARTS WITH $prefix))
RETURN properties(m) AS m
LIMIT $limit
