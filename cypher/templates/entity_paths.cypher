// graph_query template: how two entities are connected (up to 3 RELATED hops), with the
// readable chunks that mention both ends.
MATCH p = (a:Entity {id: $source})-[:RELATED*1..3]-(b:Entity {id: $target})
WITH p, [n IN nodes(p) | n.id] AS ids
ORDER BY length(p)
LIMIT 3
UNWIND ids AS eid
MATCH (e:Entity {id: eid})<-[:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(pr IN d.acl WHERE pr IN $principals))
RETURN DISTINCT c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id,
       d.title AS title, d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       1.0 AS score
LIMIT $k
