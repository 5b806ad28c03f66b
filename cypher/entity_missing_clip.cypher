// Entities among the given ids whose CLIP text embedding is missing or embeds an older name.
// idempotent: yes
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.clip_embedding IS NULL OR e.clip_name IS NULL OR e.clip_name <> e.name
RETURN e.id AS id, e.name AS name
