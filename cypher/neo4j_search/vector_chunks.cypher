// Nearest text chunks (and transcript segments) to a query vector, readable by the caller.
// Neo4j 2026.01+ (SEARCH clause; queryNodes is deprecated from 2026.04). SEARCH is Cypher 25 only,
// hence the prefix. The MATCH holding SEARCH may bind one variable, so the ACL filter is a second
// MATCH after the search. score: the index's similarity in [0, 1]. The search is at least 200
// wide; the ACL filter comes before the best $k are kept, as in the base statement.
// idempotent: yes
CYPHER 25
MATCH (node:Chunk)
  SEARCH node IN (VECTOR INDEX chunk_embedding FOR $vector LIMIT CASE WHEN $k > 200 THEN $k ELSE 200 END)
  SCORE AS score
MATCH (node)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN node.id AS id, node.text AS text, node.page AS page, node.start_s AS start_s,
       node.table_number AS table_number, node.sheet AS sheet, node.table_row AS table_row,
       node.section AS section,
       node.end_s AS end_s, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.modality AS modality, score
ORDER BY score DESC, id
LIMIT $k
