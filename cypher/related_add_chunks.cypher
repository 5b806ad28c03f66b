// Add newly written chunks to the RELATED weights (number of chunks mentioning both entities), one
// row per document: {chunks, pairs}, its chunks that mention two entities or more and, for every
// pair {a, b, w} (a < b) of entities mentioned together in them, in how many. The chunks are
// marked counted in the statement that counts them, and a row whose chunks are not all uncounted
// adds nothing, so a replayed row (a retried transaction, a resumed job) changes no weight. The
// cost is the document's own pairs, whatever the entities' degree: related_recompute expands
// every chunk of each entity, which grows with the corpus.
// idempotent: yes
UNWIND $rows AS row
UNWIND row.chunks AS chunk_id
MATCH (c:Chunk {id: chunk_id})
WHERE c.related_counted IS NULL
WITH row, collect(c) AS fresh
WHERE size(fresh) = size(row.chunks)
FOREACH (c IN fresh | SET c.related_counted = true)
WITH row
UNWIND row.pairs AS pair
MATCH (a:Entity {id: pair.a}), (b:Entity {id: pair.b})
MERGE (a)-[r:RELATED]->(b)
  ON CREATE SET r.weight = 0
SET r.weight = r.weight + pair.w
