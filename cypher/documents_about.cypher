// Readable documents about some terms, from their metadata only (title, tags, summary, path), and
// the documents $documents (those mentioning or picturing the entities the terms name, found by
// documents_about_entities): listing and document resolution, no chunk text. Those holding the
// most of the terms anywhere come first ("index example" names index_example.doc, whose title
// holds neither, before the documents titled "Index"), then by title hits. It reads each
// readable document's own properties and traverses nothing: O(documents), like a listing.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH d,
     size([t IN $terms WHERE toLower(coalesce(d.title, '')) CONTAINS t]) AS title_hits,
     size([t IN $terms WHERE any(g IN coalesce(d.tags, []) WHERE toLower(g) CONTAINS t)]) AS tag_hits,
     size([t IN $terms WHERE toLower(coalesce(d.summary, '')) CONTAINS t]) AS summary_hits,
     size([t IN $terms WHERE toLower(coalesce(d.uri, '')) CONTAINS t]) AS uri_hits,
     size([t IN $terms WHERE toLower(coalesce(d.title, '')) CONTAINS t
            OR any(g IN coalesce(d.tags, []) WHERE toLower(g) CONTAINS t)
            OR toLower(coalesce(d.summary, '')) CONTAINS t
            OR toLower(coalesce(d.uri, '')) CONTAINS t]) AS covered
WHERE title_hits + tag_hits + summary_hits + uri_hits > 0 OR d.id IN $documents
RETURN d.id AS id, 'document' AS kind, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.summary AS text, d.modality AS modality, d.tags AS tags, d.ingested_at AS ingested_at,
       title_hits, tag_hits, summary_hits, uri_hits
ORDER BY covered DESC, title_hits DESC, tag_hits DESC, d.uri
LIMIT $k
