// Bridges of multi-hop retrieval: entities mentioned by the given readable chunks (best first)
// whose names the question does not contain, most specific to the best-ranked chunk first. The
// question comes folded (kgrag.text.folding) and is matched against the folded name: a question
// writing "Zurich" names the entity "Zürich", which is then no bridge.
// idempotent: yes
UNWIND range(0, size($ids) - 1) AS rank
MATCH (c:Chunk {id: $ids[rank]})
WITH rank, c
MATCH (c)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
MATCH (c)-[m:MENTIONS]->(e:Entity)
WHERE NOT toLower($question) CONTAINS toLower(coalesce(e.name_folded, e.name))
RETURN e.id AS id, e.name AS name, min(rank) AS rank, sum(m.count) AS mentions
ORDER BY rank, mentions DESC, id
LIMIT $k
