// Store the CLIP text embedding of entity names (links images to entities) and the name it embeds.
// idempotent: yes
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.clip_embedding = vecf32(row.embedding), e.clip_name = row.name
