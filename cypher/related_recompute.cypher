// Recompute RELATED weights (number of chunks mentioning both) for the given entity pairs, grouped
// by their first entity: each row is {a, bs} (a < every b). The chunks mentioning a are expanded
// once per row, not once per pair.
// idempotent: yes
UNWIND $rows AS row
MATCH (a:Entity {id: row.a})
OPTIONAL MATCH (a)<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(x:Entity)
WHERE x.id IN row.bs
WITH a, row, x.id AS xid, count(DISTINCT c) AS w
WITH a, row, collect([xid, w]) AS found
UNWIND row.bs AS bid
MATCH (b:Entity {id: bid})
WITH a, b, [f IN found WHERE f[0] = bid | f[1]] AS ws
MERGE (a)-[r:RELATED]->(b)
SET r.weight = coalesce(ws[0], 0)
