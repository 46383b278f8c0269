// The edges between record $id and other records, as a delete tombstone
// keeps them: relationship type, whether it starts at the record, and the
// other record's id, sensitivity level and scope (so that the reference
// stays gated after the delete).
MATCH (m:Memory {id: $id})-[r]-(o:Memory)
RETURN type(r) AS type, startNode(r) = m AS out, o.id AS id, o.sensitivityLevel AS level, coalesce(o.scope, '') AS scope
ORDER BY type, out, id
