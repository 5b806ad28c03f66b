// Nearest images to a CLIP vector (from text or from an image), readable by the caller.
// Neo4j 2026.01+ SEARCH form of cypher/vector_images.cypher (see vector_chunks.cypher here).
// The search is at least 200 wide; the ACL filter comes before the best $k are kept, as in the
// base statement.
// idempotent: yes
CYPHER 25
MATCH (node:Image)
  SEARCH node IN (VECTOR INDEX image_embedding FOR $vector LIMIT CASE WHEN $k > 200 THEN $k ELSE 200 END)
  SCORE AS score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, node.caption AS text, node.uri AS image_uri, node.page AS page,
       d.id AS document_id, d.title AS title, d.uri AS uri, d.modality AS modality, score
ORDER BY score DESC, id
LIMIT $k
