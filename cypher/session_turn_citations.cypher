// What an earlier answer cites, with whether the caller may read it now (text only if so):
// a reformat follow-up reuses the answer only when every citation is still readable.
// idempotent: yes
MATCH (:Query {id: $query_id})-[:ANSWERED_BY]->(:Answer)-[c:CITES]->(n)
OPTIONAL MATCH (n)-[:PART_OF]->(d:Document)
WITH c, n, d,
     (d IS NOT NULL AND d.status = 'complete'
      AND ($admin OR any(p IN d.acl WHERE p IN $principals))) AS readable
RETURN c.marker AS marker, n.id AS id, 'Image' IN labels(n) AS is_image,
       n.start_s AS start_s, n.end_s AS end_s, n.page AS page, readable,
       n.table_number AS table_number, n.sheet AS sheet, n.table_row AS table_row,
       CASE WHEN readable THEN coalesce(n.text, n.caption) END AS text,
       CASE WHEN readable THEN n.uri END AS image_uri,
       CASE WHEN readable THEN d.id END AS document_id,
       CASE WHEN readable THEN d.title END AS title,
       CASE WHEN readable THEN d.uri END AS uri
ORDER BY marker
