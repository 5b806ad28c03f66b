// One hop from entities over readable documents only: the readable chunks that mention each
// entity, and its RELATED neighbours as co-mentioned in those chunks, weighted by how many
// readable chunks mention both (the stored RELATED weight counts private chunks too, and an
// entity only unreadable documents mention must never be reached). An entity no readable chunk
// mentions yields no row.
// idempotent: yes
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WITH e
MATCH (e)<-[m:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH e, c, m
ORDER BY m.count DESC, c.id
WITH e, collect(c) AS readable, collect({target: c.id, weight: m.count})[0..$fanout] AS chunks
UNWIND readable AS c
OPTIONAL MATCH (c)-[:MENTIONS]->(o:Entity)
WHERE o.id <> e.id
WITH e, chunks, o, count(DISTINCT c) AS weight
ORDER BY weight DESC, o.id
WITH e, chunks, collect({target: o.id, weight: weight}) AS neighbours
RETURN e.id AS source, [r IN neighbours WHERE r.target IS NOT NULL][0..$fanout] AS related,
       chunks
