// Wait (up to 300 s) until every index is online: after the schema is
// applied at start, and after the vector index is created.
CALL db.awaitIndexes(300)
