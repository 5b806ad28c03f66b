// Readable documents about some terms, from their metadata only (title, tags, summary, path), and
// the documents $documents (those mentioning or picturing the entities the terms name, found by
// documents_about_entities): listing and document resolution, no chunk text. Those holding the
// most of the terms anywhere come first ("index example" names index_example.doc, whose title
// holds neither, before the documents titled "Index"), then by title hits. It reads each
// readable document's own properties and traverses nothing: O(documents), like a listing.
// A document's other names (the paths of copies skipped as duplicates of it, also_uris) count as
// its title (their file names) and its path.
// Each term of $terms is a list of its spellings, lower case ("colour", "color"): it counts once
// wherever any of them is found.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH d, toLower(coalesce(d.summary, '')) AS summary, [g IN coalesce(d.tags, []) | toLower(g)] AS tags,
     [u IN coalesce(d.also_uris, []) | toLower(u)] AS others
WITH d, summary, tags,
     reduce(s = toLower(coalesce(d.title, '')), u IN others | s + ' ' + last(split(u, '/')))
       AS title,
     reduce(s = toLower(coalesce(d.uri, '')), u IN others | s + ' ' + u) AS uri
WITH d,
     size([t IN $terms WHERE any(s IN t WHERE title CONTAINS s)]) AS title_hits,
     size([t IN $terms WHERE any(s IN t WHERE any(g IN tags WHERE g CONTAINS s))]) AS tag_hits,
     size([t IN $terms WHERE any(s IN t WHERE summary CONTAINS s)]) AS summary_hits,
     size([t IN $terms WHERE any(s IN t WHERE uri CONTAINS s)]) AS uri_hits,
     size([t IN $terms WHERE any(s IN t WHERE title CONTAINS s OR summary CONTAINS s
            OR uri CONTAINS s OR any(g IN tags WHERE g CONTAINS s))]) AS covered
WHERE title_hits + tag_hits + summary_hits + uri_hits > 0 OR d.id IN $documents
RETURN d.id AS id, 'document' AS kind, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.summary AS text, d.modality AS modality, d.tags AS tags, d.ingested_at AS ingested_at,
       coalesce(d.also_uris, []) AS also_uris,
       d.file_modified_at AS file_modified_at, d.content_created_at AS content_created_at,
       d.content_modified_at AS content_modified_at, d.authors AS authors,
       title_hits, tag_hits, summary_hits, uri_hits
ORDER BY covered DESC, title_hits DESC, tag_hits DESC, d.uri
LIMIT $k
