// Documents stored for one source URI (normally one; two while a changed file is replaced).
MATCH (d:Document {uri: $uri})
RETURN d.id AS id, d.sha256 AS sha256, d.status AS status
