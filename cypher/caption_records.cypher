// The caption property (what Neo4j Browser shows on a node, through the
// stylesheet served at /browser/style.grass) of records written before it
// existed: the record's name (membrane.DisplayName), except on sealed
// records, whose name says only "<type> (encrypted)": theirs is the type
// and id, like the one written with them (internal/neo4j, seal). Migrate
// runs it once over every scope ($scopes null) and then records the
// Migration caption_records_v2; idempotent.
MATCH (m:Memory)
WHERE m.caption IS NULL AND ($scopes IS NULL OR m.scope IN $scopes)
CALL (m) {
  SET m.caption = CASE WHEN m.encrypted = true OR m.name IS NULL THEN m.type + ' ' + m.id ELSE m.name END
} IN TRANSACTIONS OF 10000 ROWS
