// Link images to the entities they depict (CLIP image-text similarity above a threshold).
// idempotent: yes
UNWIND $rows AS row
MATCH (i:Image {id: row.image_id}), (e:Entity {id: row.entity_id})
MERGE (i)-[r:DEPICTS]->(e)
SET r.score = row.score
