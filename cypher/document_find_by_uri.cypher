// Documents stored for one source URI (normally one; two while a changed file is replaced),
// with their ACL (an unchanged file ingested again with another ACL only gets the new one).
MATCH (d:Document {uri: $uri})
RETURN d.id AS id, d.sha256 AS sha256, d.status AS status, d.acl AS acl
