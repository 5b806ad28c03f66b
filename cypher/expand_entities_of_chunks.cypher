// One hop from chunks to the entities they mention (readable chunks only, so every entity
// reached is one a readable document mentions).
// idempotent: yes
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WITH c
MATCH (c)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
MATCH (c)-[m:MENTIONS]->(e:Entity)
RETURN c.id AS source, e.id AS target, 'MENTIONS' AS type, m.count AS weight
