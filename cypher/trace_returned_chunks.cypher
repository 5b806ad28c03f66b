// Link a step to the chunks it returned, with rank, score and the heading path of the chunk's
// section as the step saw it (null outside any section).
// idempotent: yes
UNWIND $rows AS row
MATCH (s:Step {id: row.step})
MATCH (n:Chunk {id: row.id})
MERGE (s)-[r:RETURNED]->(n)
SET r.rank = row.rank, r.score = row.score, r.section = row.section
