// Add newly written chunks to the RELATED weights (number of chunks mentioning both entities).
// $docs: [{id, chunks}], each document's chunks that mention two entities or more; $pairs:
// [{doc, a, b, w}], every pair a < b of entities mentioned together in such chunks of document
// doc, in how many. A document's chunks are marked counted in the statement that counts them, and
// a document whose chunks are not all uncounted adds nothing, so a replayed statement (a retried
// transaction, a resumed job) changes no weight. The cost is the documents' own pairs, whatever
// the entities' degree (related_recompute expands every chunk of each entity, which grows with
// the corpus). Flat lists, not pairs nested in the documents: FalkorDB copies a record's values
// for every row an UNWIND makes, so nesting cost 30 times more there.
// idempotent: yes
UNWIND $docs AS doc
UNWIND doc.chunks AS chunk_id
MATCH (c:Chunk {id: chunk_id})
WITH doc.id AS doc_id, size(doc.chunks) AS wanted, collect(c) AS chunks,
     sum(CASE WHEN c.related_counted IS NULL THEN 1 ELSE 0 END) AS uncounted
WHERE uncounted = wanted
FOREACH (c IN chunks | SET c.related_counted = true)
WITH collect(doc_id) AS fresh
UNWIND $pairs AS pair
WITH pair, fresh
WHERE pair.doc IN fresh
MATCH (a:Entity {id: pair.a}), (b:Entity {id: pair.b})
MERGE (a)-[r:RELATED]->(b)
SET r.weight = coalesce(r.weight, 0) + pair.w
