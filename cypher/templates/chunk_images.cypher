// graph_query template: readable images related to the given chunks: NEAR them, or depicting
// an entity they mention.
// idempotent: yes
UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
OPTIONAL MATCH (c)<-[:NEAR]-(near:Image)
WITH c, collect(DISTINCT near) AS nears
OPTIONAL MATCH (c)-[:MENTIONS]->(:Entity)<-[r:DEPICTS]-(dep:Image)
WITH nears, collect(DISTINCT {img: dep, s: coalesce(r.score, 0.5)}) AS depicted
WITH [i IN nears | {img: i, s: 1.0}] + depicted AS found
UNWIND found AS f
WITH f.img AS i, max(f.s) AS score
WHERE i IS NOT NULL
MATCH (i)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN i.id AS id, 'image' AS kind, i.caption AS text, i.uri AS image_uri, d.id AS document_id,
       d.title AS title, d.uri AS uri, i.page AS page, null AS start_s, null AS end_s, score
ORDER BY score DESC
LIMIT $k
