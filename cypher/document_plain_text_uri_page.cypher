// A page of the documents stored as $mime (plain text) by id, after $after, with their file:
// migration 0014_data_format_types types the data files among them by their suffix
// (kgrag.graph.migrations; schema maintenance, not a user's read).
// idempotent: yes
MATCH (d:Document)
WHERE d.id > $after AND d.mime = $mime
RETURN d.id AS id, d.uri AS uri
ORDER BY id
LIMIT $limit
