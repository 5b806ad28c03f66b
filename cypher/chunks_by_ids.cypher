// Readable chunks by id with their document (to materialise ranked nodes).
// idempotent: yes
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WITH c
MATCH (c)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN c.id AS id, c.text AS text, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       d.id AS document_id, d.title AS title, d.uri AS uri, d.modality AS modality,
       c.table_number AS table_number, c.sheet AS sheet, c.table_row AS table_row,
       c.section AS section
