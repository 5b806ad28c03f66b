// An entity's side of a comparison, from readable evidence only: the chunks that mention it most,
// with their documents, and the entities those chunks also mention. The entities are sought by
// id (the caller resolves names to ids through the full-text index), and only each entity's best
// $k mentions look up their co-mentioned entities, so the cost follows the entity's mentions, not
// the corpus.
// idempotent: yes
MATCH (e:Entity)
WHERE e.id IN $ids
WITH e
MATCH (e)<-[m:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH e, m, c, d
ORDER BY m.count DESC, c.id
WITH e, collect({m: m, c: c, d: d})[0..$k] AS best
UNWIND best AS b
WITH e, b.m AS m, b.c AS c, b.d AS d
OPTIONAL MATCH (c)-[:MENTIONS]->(o:Entity)
WHERE o.id <> e.id
WITH e, m, c, d, collect(DISTINCT o.name) AS others
ORDER BY m.count DESC, c.id
RETURN e.id AS entity_id, e.name AS name, e.type AS type,
       collect({id: c.id, text: c.text, document_id: d.id, title: d.title, uri: d.uri,
                page: c.page, start_s: c.start_s, end_s: c.end_s, count: m.count,
                others: others}) AS mentions
