// Add newly written chunks to the RELATED weights (number of chunks mentioning both entities), one
// row per chunk: {chunk, pairs}, the pairs [a, b] (a < b) of the entities it mentions. A chunk
// is counted once ever: it is marked in the statement that counts it, so a replayed row (a
// retried transaction, a resumed job) adds nothing. Rows name distinct chunks. The cost is the
// chunk's own pairs, whatever the entities' degree: related_recompute expands every chunk of
// each entity, which grows with the corpus.
// idempotent: yes
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk})
WHERE c.related_counted IS NULL
SET c.related_counted = true
WITH row
UNWIND row.pairs AS pair
MATCH (a:Entity {id: pair[0]}), (b:Entity {id: pair[1]})
MERGE (a)-[r:RELATED]->(b)
  ON CREATE SET r.weight = 0
SET r.weight = r.weight + 1
