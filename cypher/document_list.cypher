// Visible documents a reader may see.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN d.id AS id, d.uri AS uri, d.title AS title, d.modality AS modality, d.mime AS mime,
       d.bytes AS bytes, d.ingested_at AS ingested_at, d.tags AS tags, d.summary AS summary,
       d.chunk_count AS chunk_count, d.image_count AS image_count, d.authors AS authors
ORDER BY d.uri
