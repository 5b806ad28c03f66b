// After a bulk import (neo4j-admin reads an empty array field as no property): give documents
// the empty acl and tags lists the transactional writer stores.
// idempotent: yes
MATCH (d:Document)
WHERE d.acl IS NULL OR d.tags IS NULL
SET d.acl = coalesce(d.acl, []), d.tags = coalesce(d.tags, [])
RETURN count(d) AS filled
