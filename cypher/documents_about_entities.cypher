// The readable documents that mention or picture some entities, one row per document and entity
// name (documents_about ranks them with the others). Sought by entity id, so the cost follows
// those entities' mentions, not the corpus. A picture names an entity only when a readable chunk
// mentions it (a DEPICTS link alone does not make an entity known to the picture's readers).
// idempotent: yes
MATCH (e:Entity)
WHERE e.id IN $entity_ids
WITH e
OPTIONAL MATCH (e)<-[:MENTIONS]-(:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH e, collect(DISTINCT d.id) AS mentioning
WHERE size(mentioning) > 0
OPTIONAL MATCH (e)<-[:DEPICTS]-(:Image)-[:PART_OF]->(pd:Document)
WHERE pd.status = 'complete' AND ($admin OR any(p IN pd.acl WHERE p IN $principals))
WITH e, mentioning, collect(DISTINCT pd.id) AS depicting
UNWIND mentioning + [x IN depicting WHERE NOT x IN mentioning] AS document_id
RETURN document_id, e.name AS name, document_id IN mentioning AS mentioned
ORDER BY document_id, mentioned DESC, name
