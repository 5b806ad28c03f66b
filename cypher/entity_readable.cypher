// Of the given entities, those the caller may read about: mentioned by a readable chunk or
// depicted by a readable image (entities of documents only others may read stay unknown).
UNWIND $ids AS id
MATCH (e:Entity {id: id})<-[:MENTIONS|DEPICTS]-(n)-[:PART_OF]->(d:Document)
WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
RETURN DISTINCT e.id AS id
