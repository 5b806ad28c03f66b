// Readable documents about some terms, from their metadata only (title, tags, summary, the
// names of the entities they mention or depict): listing and document resolution, no chunk text.
// idempotent: yes
MATCH (d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
OPTIONAL MATCH (d)<-[:PART_OF]-(:Chunk)-[:MENTIONS]->(e:Entity)
WHERE e.id IN $entity_ids OR any(t IN $terms WHERE toLower(e.name) CONTAINS t)
WITH d, collect(DISTINCT e.name) AS mentioned
// an entity a picture of the document depicts is named only when a readable chunk mentions it
OPTIONAL MATCH (d)<-[:PART_OF]-(:Image)-[:DEPICTS]->(e:Entity)<-[:MENTIONS]-(:Chunk)-[:PART_OF]->(md:Document)
WHERE (e.id IN $entity_ids OR any(t IN $terms WHERE toLower(e.name) CONTAINS t))
  AND md.status = 'complete' AND ($admin OR any(p IN md.acl WHERE p IN $principals))
WITH d, mentioned, collect(DISTINCT e.name) AS depicted
WITH d, mentioned + [n IN depicted WHERE NOT n IN mentioned] AS entities
WITH d, entities,
     size([t IN $terms WHERE toLower(coalesce(d.title, '')) CONTAINS t]) AS title_hits,
     size([t IN $terms WHERE any(g IN coalesce(d.tags, []) WHERE toLower(g) CONTAINS t)]) AS tag_hits,
     size([t IN $terms WHERE toLower(coalesce(d.summary, '')) CONTAINS t]) AS summary_hits,
     size([t IN $terms WHERE toLower(coalesce(d.uri, '')) CONTAINS t]) AS uri_hits
WHERE title_hits + tag_hits + summary_hits + uri_hits + size(entities) > 0
RETURN d.id AS id, 'document' AS kind, d.id AS document_id, d.title AS title, d.uri AS uri,
       d.summary AS text, d.modality AS modality, d.tags AS tags, d.ingested_at AS ingested_at,
       entities, title_hits, tag_hits, summary_hits, uri_hits
ORDER BY title_hits DESC, tag_hits DESC, d.uri
LIMIT $k
