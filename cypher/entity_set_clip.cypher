// Store the CLIP text embedding of entity names (links images to entities).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.clip_embedding = row.embedding
