// Link chunks to the entities they mention, with counts.
// idempotent: yes
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id}), (e:Entity {id: row.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
SET m.count = row.count
