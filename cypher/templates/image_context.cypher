// graph_query template: what images found by example are linked to. For each image (ids best
// first): the chunks NEAR it, the chunks of the document it is PART_OF, and the chunks that
// mention an entity it DEPICTS; readable documents only, each chunk at its best score.
// idempotent: yes
UNWIND range(0, size($ids) - 1) AS i
MATCH (img:Image {id: $ids[i]})
OPTIONAL MATCH (img)-[:NEAR]->(near:Chunk)
WITH i, img, collect(DISTINCT near) AS nears
OPTIONAL MATCH (img)-[:PART_OF]->(:Document)<-[:PART_OF]-(same:Chunk)
WITH i, img, nears, collect(DISTINCT same) AS sames
OPTIONAL MATCH (img)-[dep:DEPICTS]->(:Entity)<-[:MENTIONS]-(men:Chunk)
WITH i, nears, sames, collect(DISTINCT {c: men, s: coalesce(dep.score, 0.5)}) AS mentions
WITH 1.0 / (i + 1) AS w,
     [c IN nears | {c: c, s: 1.0}] + [c IN sames | {c: c, s: 0.8}]
     + [m IN mentions | {c: m.c, s: 0.6 * m.s}] AS found
UNWIND found AS f
WITH f.c AS c, max(w * f.s) AS score
WHERE c IS NOT NULL
MATCH (c)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN c.id AS id, 'chunk' AS kind, c.text AS text, d.id AS document_id, d.title AS title,
       d.uri AS uri, c.page AS page, c.start_s AS start_s, c.end_s AS end_s,
       c.section AS section, score
ORDER BY score DESC
LIMIT $k
