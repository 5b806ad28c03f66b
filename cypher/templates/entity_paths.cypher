// graph_query template: how two entities are connected (up to 3 RELATED hops), with the
// readable chunks that mention both ends. The shortest paths first, ties by their entity ids,
// and the chunks of the shortest path first, ties by chunk id: the same paths and chunks in the
// same order on every engine (without a total order, which 3 paths and which $k chunks were
// kept was up to the engine's traversal order).
// idempotent: yes
MATCH p = (a:Entity {id: $source})-[:RELATED*1..3]-(b:Entity {id: $target})
WITH length(p) AS hops, [n IN nodes(p) | n.id] AS ids
WITH hops, ids, reduce(s = '', i IN ids | s + '|' + i) AS key
ORDER BY hops, key
LIMIT 3
UNWIND ids AS eid
WITH eid, min(hops) AS hops
MATCH (e:Entity {id: eid})<-[:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(pr IN d.acl WHERE pr IN $principals))
WITH c, d, min(hops) AS hops
RETURN c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id,
       d.title AS title, d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       c.table_number AS table_number, c.sheet AS sheet, c.table_row AS table_row,
       c.section AS section,
       1.0 AS score
ORDER BY hops, id
LIMIT $k
