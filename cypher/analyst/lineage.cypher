// The lineage of a record as a graph: everything it came from and
// everything derived from it, within 10 hops.
// :param id => '<newFact.id>'
MATCH (root:Memory {id: $id})
MATCH p = (root)-[:SUPERSEDES|DERIVED_FROM|CONTESTED_BY*0..10]-(n:Memory)
RETURN p
LIMIT 300
