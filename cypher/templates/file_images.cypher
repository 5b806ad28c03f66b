// graph_query template: the images of the readable documents a question names by file name
// ($names, lower case: "deps.png", "manual.pdf"), in page order. It compares every readable
// document's URI with the names (O(documents)); the rule planner adds it only when the question
// names a file and wants pictures.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
  AND any(n IN $names WHERE toLower(d.uri) = n OR toLower(d.uri) ENDS WITH ('/' + n))
WITH d
MATCH (i:Image)-[:PART_OF]->(d)
RETURN i.id AS id, 'image' AS kind, i.caption AS text, i.uri AS image_uri, d.id AS document_id,
       d.title AS title, d.uri AS uri, i.page AS page, null AS start_s, null AS end_s,
       1.0 AS score
ORDER BY d.uri, coalesce(i.page, 0), i.id
LIMIT $k
