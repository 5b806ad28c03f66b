// Nearest images to a CLIP vector (from text or from an image), readable by the caller.
CALL db.index.vector.queryNodes('image_embedding', $k, $vector) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, node.caption AS text, node.uri AS image_uri, node.page AS page,
       d.id AS document_id, d.title AS title, d.uri AS uri, d.modality AS modality, score
ORDER BY score DESC
