// The last count of sealed records by key id (sealed_key_ids), as Migrate
// or Reseal stored it.
OPTIONAL MATCH (c:SealedCount {name: 'sealed_records'})
RETURN c.keyIds AS keyIds, c.counts AS counts
