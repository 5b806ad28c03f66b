// graph_query template: the first chunks, in document order, of the readable documents a question
// names by file name ($names, lower case: "jfk.flac", "report.pdf"). It compares every readable
// document's URI with the names (O(documents)); the rule planner adds it only when the question
// names a file.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
  AND any(n IN $names WHERE toLower(d.uri) = n OR toLower(d.uri) ENDS WITH ('/' + n))
WITH d
MATCH (c:Chunk)-[:PART_OF]->(d)
WITH c, d
ORDER BY d.uri, coalesce(c.start_s, 0.0), coalesce(c.position, 0), c.id
WITH collect({c: c, d: d}) AS ordered
UNWIND range(0, size(ordered) - 1) AS rank
WITH ordered[rank].c AS c, ordered[rank].d AS d, rank
RETURN c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       c.table_number AS table_number, c.sheet AS sheet, c.table_row AS table_row,
       c.section AS section,
       1.0 / (1 + rank) AS score
ORDER BY score DESC
LIMIT $k
