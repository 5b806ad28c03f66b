// FalkorDB: vecf32 and cosine distance in [0, 2] -> similarity (1 + cos) / 2 in [0, 1], as Neo4j.
// The readable passages of the documents $document_ids, nearest the vector $vector first (cosine
// similarity in [0, 1], as the vector index scores): the passages of a comparison's side that
// names its documents, ranked by the question (kgrag.executor.compare_sides). Reads only the
// chunks of those documents.
// idempotent: yes
UNWIND $document_ids AS did
MATCH (d:Document {id: did})
WITH d
MATCH (c:Chunk)-[:PART_OF]->(d)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       c.table_number AS table_number, c.sheet AS sheet, c.table_row AS table_row,
       c.section AS section,
       1.0 - vec.cosineDistance(c.embedding, vecf32($vector)) / 2.0 AS score
ORDER BY score DESC, id
LIMIT $k
