// Link a step to the chunks it returned, with rank and score.
// idempotent: yes
UNWIND $rows AS row
MATCH (s:Step {id: row.step})
MATCH (n:Chunk {id: row.id})
MERGE (s)-[r:RETURNED]->(n)
SET r.rank = row.rank, r.score = row.score
