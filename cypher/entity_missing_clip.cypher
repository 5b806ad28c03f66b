// Entities among the given ids that have no CLIP text embedding yet.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.clip_embedding IS NULL
RETURN e.id AS id, e.name AS name
