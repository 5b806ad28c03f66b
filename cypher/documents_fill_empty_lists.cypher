// After a bulk import (neo4j-admin reads an empty array field as no property): give documents
// the empty acl, tags and authors lists the transactional writer stores.
// idempotent: yes
MATCH (d:Document)
WHERE d.acl IS NULL OR d.tags IS NULL OR d.authors IS NULL
SET d.acl = coalesce(d.acl, []), d.tags = coalesce(d.tags, []), d.authors = coalesce(d.authors, [])
RETURN count(d) AS filled
