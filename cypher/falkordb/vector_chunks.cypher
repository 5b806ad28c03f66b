// FalkorDB: vecf32 and cosine distance in [0, 2] -> similarity (1 + cos) / 2 in [0, 1], as Neo4j.
// idempotent: yes
CALL db.idx.vector.queryNodes('Chunk', 'embedding', CASE WHEN $k > 200 THEN $k ELSE 200 END, vecf32($vector)) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, node.text AS text, node.page AS page, node.start_s AS start_s,
       node.table_number AS table_number, node.sheet AS sheet, node.table_row AS table_row,
       node.section AS section,
       node.end_s AS end_s, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.modality AS modality, 1.0 - score / 2.0 AS score
ORDER BY score DESC, id
LIMIT $k
