// The schema version the database records: the MembraneSchema node $node
// ('membrane'; another name only in tests). No row: none recorded.
MATCH (s:MembraneSchema {id: $node})
RETURN s.version AS version
