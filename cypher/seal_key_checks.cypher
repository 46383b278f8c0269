// The check value of each key this server holds ($keys: {id, check},
// KeyCheck), recorded by the first server that holds the key: replicas
// racing write the same value, and the seal_key_id constraint makes the
// MERGE safe. A stored check that differs from this server's means the key
// under that id changed: every record sealed under the id is unreadable
// here.
UNWIND $keys AS key
MERGE (k:SealKey {id: key.id})
ON CREATE SET k.check = key.check, k.at = $now, k:Bookkeeping
RETURN k.id AS id, k.check = key.check AS matches
