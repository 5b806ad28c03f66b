// Readable documents by metadata: modality, MIME type (a format: 'text/troff', man pages), tags
// (all of them), author ($authors: names, each a list of lower-case words, every word of one of
// them a word of one of the document's authors), date range on the document's date (a
// 'date:YYYY-MM-DD' tag from the manifest, else ingested_at); a null filter is no filter.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
  AND ($modalities IS NULL OR d.modality IN $modalities)
  AND ($mimes IS NULL OR d.mime IN $mimes)
  AND ($tags IS NULL OR all(t IN $tags WHERE any(g IN coalesce(d.tags, []) WHERE toLower(g) = t)))
  AND ($authors IS NULL OR any(name IN $authors WHERE any(a IN coalesce(d.authors, [])
       WHERE all(w IN name WHERE w IN split(replace(replace(toLower(a), ',', ' '), '.', ' '), ' ')))))
WITH d, coalesce(head([g IN coalesce(d.tags, []) WHERE g STARTS WITH 'date:' | substring(g, 5)]),
                 d.ingested_at) AS date
WHERE ($date_from IS NULL OR date >= $date_from)
  AND ($date_to IS NULL OR substring(date, 0, size($date_to)) <= $date_to)
RETURN d.id AS id, 'document' AS kind, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.summary AS text, d.modality AS modality, d.tags AS tags, d.ingested_at AS ingested_at,
       d.authors AS authors, date
ORDER BY date DESC, d.uri
LIMIT $k
