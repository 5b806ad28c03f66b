// Recompute every RELATED weight from the chunks (after recovering from a killed job).
// idempotent: yes
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(b)
WITH r, count(DISTINCT c) AS w
SET r.weight = w
