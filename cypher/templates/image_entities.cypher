// graph_query template: the entities that images found by example DEPICT (best CLIP score
// first), when the image's document is readable and a readable chunk mentions the entity (its
// name comes from the documents that mention it, not from the picture).
// idempotent: yes
UNWIND $ids AS iid
MATCH (img:Image {id: iid})
WITH img
MATCH (img)-[r:DEPICTS]->(e:Entity)
MATCH (img)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
MATCH (e)<-[:MENTIONS]-(:Chunk)-[:PART_OF]->(md:Document)
WHERE md.status = 'complete' AND ($admin OR any(p IN md.acl WHERE p IN $principals))
WITH e, max(r.score) AS score
RETURN e.id AS id, 'entity' AS kind, e.name AS text, score
ORDER BY score DESC
LIMIT $k
