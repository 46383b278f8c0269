// The sensitivity level and scope of each record of $ids that exists:
// audit references are gated on them as well as on the copies their
// entries keep.
UNWIND $ids AS id
MATCH (o:Memory {id: id})
RETURN id, o.sensitivityLevel AS level, coalesce(o.scope, '') AS scope
