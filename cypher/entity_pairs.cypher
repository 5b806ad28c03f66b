// RELATED pairs touching the given entities.
// idempotent: yes
UNWIND $ids AS id
MATCH (a:Entity {id: id})-[:RELATED]-(b:Entity)
RETURN DISTINCT a.id AS a, b.id AS b
