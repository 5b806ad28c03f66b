// graph_query template: readable images that depict the given entities, or sit near chunks
// that mention them.
// idempotent: yes
UNWIND $entity_ids AS eid
MATCH (e:Entity {id: eid})
OPTIONAL MATCH (e)<-[r:DEPICTS]-(i:Image)
OPTIONAL MATCH (e)<-[:MENTIONS]-(:Chunk)<-[:NEAR]-(j:Image)
WITH collect(DISTINCT {img: i, s: r.score}) + collect(DISTINCT {img: j, s: 0.5}) AS found
UNWIND found AS f
WITH f.img AS i, max(f.s) AS score
WHERE i IS NOT NULL
MATCH (i)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN i.id AS id, 'image' AS kind, i.caption AS text, i.uri AS image_uri, d.id AS document_id,
       d.title AS title, d.uri AS uri, i.page AS page, null AS start_s, null AS end_s, score
ORDER BY score DESC
LIMIT $k
