// A record as it is now: what as_of.cypher gives when $asOf is null, without
// reading its audit entries nor building its properties twice (about 75 db
// hits per record of a lineage). Used inside CALL (m) {} in place of
// as_of.cypher when no instant is asked for.
RETURN properties(m) AS v
