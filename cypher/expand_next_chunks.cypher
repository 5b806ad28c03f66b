// One hop along the reading order: the readable chunks right before and after each chunk
// (NEXT links a chunk to the one that follows it in its document or recording).
// idempotent: yes
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WITH c
MATCH (c)-[:NEXT]-(n:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN c.id AS source, n.id AS target, 'NEXT' AS type, 1 AS weight
