// Nearest text chunks (and transcript segments) to a query vector, readable by the caller.
// Neo4j searches with a beam as wide as the count asked for: ask for at least 200 (FalkorDB's
// efRuntime). The ACL filter comes before the best $k are kept, so what a reader gets does not
// depend on documents they cannot read (kgrag/executor/nearest.py widens the search when fewer
// than $k of the candidates are readable).
// idempotent: yes
CALL db.index.vector.queryNodes('chunk_embedding', CASE WHEN $k > 200 THEN $k ELSE 200 END, $vector) YIELD node, score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, node.text AS text, node.page AS page, node.start_s AS start_s,
       node.table_number AS table_number, node.sheet AS sheet, node.table_row AS table_row,
       node.section AS section,
       node.end_s AS end_s, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.modality AS modality, score
ORDER BY score DESC, id
LIMIT $k
