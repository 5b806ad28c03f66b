// One hop from entities: related entities and the readable chunks that mention them.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
OPTIONAL MATCH (e)-[r:RELATED]-(o:Entity)
WITH e, collect(DISTINCT {target: o.id, weight: r.weight})[0..$fanout] AS related
OPTIONAL MATCH (e)<-[m:MENTIONS]-(c:Chunk)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
WITH e, related, collect(DISTINCT {target: c.id, weight: m.count})[0..$fanout] AS chunks
RETURN e.id AS source, related, chunks
