// The last count of sealed records by key id (sealed_key_ids), with the
// check values of the keys of the server that counted.
OPTIONAL MATCH (c:SealedCount {name: 'sealed_records'})
RETURN c.keyIds AS keyIds, c.counts AS counts, c.checks AS checks
