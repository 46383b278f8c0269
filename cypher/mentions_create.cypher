// The MENTIONS edges from records created in this transaction to the
// entities their text names ($edges: [{from, to}], chosen in Go from
// link_mentions' entities and those of the same batch). The record is new,
// so the edge cannot exist yet: CREATE, as a capture's mentions.
UNWIND $edges AS x
MATCH (m:Memory {id: x.from})
MATCH (e:Memory {id: x.to})
CREATE (m)-[r:MENTIONS]->(e)
SET r.weight = 1.0, r.createdAt = m.createdAt, r.actor = m.provenanceCreatedBy
RETURN count(*) AS linked
