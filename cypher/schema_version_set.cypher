// Records that the database holds schema version $version (the
// MembraneSchema node $node, see schema_version). Replicas starting
// together on an empty database write the same value; the
// membrane_schema_id constraint makes the MERGE safe.
MERGE (s:MembraneSchema {id: $node})
ON CREATE SET s:Bookkeeping
SET s.version = $version, s.at = $now
