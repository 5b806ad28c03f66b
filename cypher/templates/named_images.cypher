// graph_query template: the images of readable picture files whose titles (the file's name
// without its extension) contain every one of $terms (a picture question's stemmed content
// words, lower case: kgrag/text/file_names.py), or whose other names (the paths of copies skipped
// as duplicates of it, also_uris) do, in title order. The candidates of the name match:
// kgrag/executor/picture_names.py keeps those whose name has each term as a whole word. It
// compares every readable picture document's title with the terms (O(picture documents)); the
// rule planner adds it only when the question wants pictures and names something.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
  AND d.modality = 'image'
  AND size($terms) > 0
  AND (all(t IN $terms WHERE toLower(d.title) CONTAINS t)
       OR any(u IN coalesce(d.also_uris, []) WHERE all(t IN $terms WHERE toLower(u) CONTAINS t)))
WITH d
MATCH (i:Image)-[:PART_OF]->(d)
RETURN i.id AS id, 'image' AS kind, i.caption AS text, i.uri AS image_uri, d.id AS document_id,
       d.title AS title, d.uri AS uri, coalesce(d.also_uris, []) AS also_uris, i.page AS page,
       null AS start_s, null AS end_s,
       1.0 AS score
ORDER BY d.title, d.uri, i.id
LIMIT $k
