// Link an answer to the chunks it cites, with the citation marker and the heading path of the
// chunk's section (null outside any section).
// idempotent: yes
UNWIND $rows AS row
MATCH (a:Answer {id: $answer_id})
MATCH (n:Chunk {id: row.id})
MERGE (a)-[c:CITES]->(n)
SET c.marker = row.marker, c.section = row.section
