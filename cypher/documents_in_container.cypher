// Documents stored as members of a container (their URIs start with the container's and '!'),
// so that the members a changed archive no longer holds are removed with its old version.
// idempotent: yes
MATCH (d:Document)
WHERE d.uri STARTS WITH $prefix
RETURN d.id AS id, d.uri AS uri
