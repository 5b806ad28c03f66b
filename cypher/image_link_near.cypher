// Link images to the text of their page or section.
// idempotent: yes
UNWIND $rows AS row
MATCH (i:Image {id: row.image_id}), (c:Chunk {id: row.chunk_id})
MERGE (i)-[:NEAR]->(c)
