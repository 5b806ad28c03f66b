// FalkorDB full-text procedure (RediSearch query syntax).
CALL db.idx.fulltext.queryNodes('Chunk', $query) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, 'chunk' AS kind, node.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, node.page AS page, node.start_s AS start_s, node.end_s AS end_s, score
ORDER BY score DESC
LIMIT $k
