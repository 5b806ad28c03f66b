// How many readable documents there are of each type: by modality and stored MIME type, with the
// newest of each (by the document's date: a 'date:YYYY-MM-DD' tag from the manifest, else
// ingested_at) as its example; the most common types first.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH d, coalesce(head([g IN coalesce(d.tags, []) WHERE g STARTS WITH 'date:' | substring(g, 5)]),
                 d.ingested_at) AS date
ORDER BY date DESC, d.uri
WITH d.modality AS modality, coalesce(d.mime, '') AS mime, count(d) AS documents,
     collect(d)[0] AS newest
RETURN newest.id AS id, 'document' AS kind, newest.id AS document_id, newest.title AS title,
       newest.uri AS uri, newest.summary AS text, modality, mime, documents,
       newest.ingested_at AS ingested_at
ORDER BY documents DESC, modality, mime
LIMIT $k
