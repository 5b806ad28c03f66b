// graph_query template: readable chunks that mention the given entities, most mentions first.
// idempotent: yes
UNWIND $entity_ids AS eid
MATCH (e:Entity {id: eid})
WITH e
MATCH (e)<-[m:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH c, d, sum(m.count) AS mentions
RETURN c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       c.table_number AS table_number, c.sheet AS sheet, c.table_row AS table_row,
       c.section AS section,
       toFloat(mentions) AS score
ORDER BY score DESC
LIMIT $k
