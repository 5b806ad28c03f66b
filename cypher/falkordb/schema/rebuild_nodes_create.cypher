// FalkorDB: the new nodes' internal ids (id()), which the relationships are created between.
// idempotent: no
UNWIND $rows AS row
CREATE (n:`{{label}}`)
SET n = row.props
RETURN id(n) AS id
