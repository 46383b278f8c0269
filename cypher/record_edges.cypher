// The edges between record $id and other records, as the text a delete
// tombstone keeps: TYPE->id for outgoing edges, TYPE<-id for incoming ones.
MATCH (m:Memory {id: $id})-[r]-(o:Memory)
RETURN type(r) + CASE WHEN startNode(r) = m THEN '->' ELSE '<-' END + o.id AS edge
ORDER BY edge
