// Recompute RELATED weights (number of chunks mentioning both) for the given entity pairs.
UNWIND $rows AS row
MATCH (a:Entity {id: row.a}), (b:Entity {id: row.b})
OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b)
WITH a, b, count(DISTINCT c) AS w
MERGE (a)-[r:RELATED]->(b)
SET r.weight = w
