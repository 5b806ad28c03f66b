// A page of the documents stored as $mime (plain text) by id, after $after, with their file,
// title and first $passages passages: migration 0013_man_page_types tells the man pages among them
// (kgrag.graph.migrations; schema maintenance, not a user's read).
// idempotent: yes
MATCH (d:Document)
WHERE d.id > $after AND d.mime = $mime
WITH d
ORDER BY d.id
LIMIT $limit
OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d)
WITH d, c
ORDER BY d.id, c.position
WITH d, collect(c.text) AS texts
RETURN d.id AS id, d.uri AS uri, d.title AS title, texts[0..$passages] AS texts
ORDER BY id
