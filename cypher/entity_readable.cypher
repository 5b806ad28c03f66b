// Of the given entities, those the caller may read about: mentioned by a readable chunk
// (entities of documents only others may read stay unknown; a readable picture that DEPICTS an
// entity does not make it known: its name comes from the documents that mention it).
// One readable document is enough: the subquery stops at the first (an entity a whole corpus
// mentions would otherwise enumerate every mention). The scoped `CALL (e)` form (Neo4j 5.23+;
// the importing WITH is deprecated); FalkorDB's overlay keeps the older form.
// idempotent: yes
UNWIND $ids AS id
MATCH (e:Entity {id: id})
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(n)-[:PART_OF]->(d:Document)
  WHERE d.status = 'complete' AND ($admin OR any(p IN d.acl WHERE p IN $principals))
  RETURN d
  LIMIT 1
}
RETURN DISTINCT e.id AS id
