// Nearest text chunks (and transcript segments) to a query vector, readable by the caller.
CALL db.index.vector.queryNodes('chunk_embedding', $k, $vector) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, node.text AS text, node.page AS page, node.start_s AS start_s,
       node.end_s AS end_s, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.modality AS modality, score
ORDER BY score DESC
