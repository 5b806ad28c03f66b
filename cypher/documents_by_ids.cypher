// Metadata of readable documents by id (metadata-aware reranking reads it for its rules).
// idempotent: yes
MATCH (d:Document)
WHERE d.id IN $ids AND d.status = 'complete'
  AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN d.id AS id, d.title AS title, d.uri AS uri, d.modality AS modality, d.mime AS mime,
       d.tags AS tags, d.ingested_at AS ingested_at,
       coalesce(head([g IN coalesce(d.tags, []) WHERE g STARTS WITH 'date:' | substring(g, 5)]),
                d.ingested_at) AS date
