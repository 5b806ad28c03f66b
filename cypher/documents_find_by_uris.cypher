// Documents stored for the given source URIs (normally one each; two while a changed file is
// replaced), with their ACL: an unchanged file ingested again with another ACL only gets it.
// idempotent: yes
UNWIND $uris AS uri
MATCH (d:Document {uri: uri})
RETURN d.uri AS uri, d.id AS id, d.sha256 AS sha256, d.status AS status, d.acl AS acl
