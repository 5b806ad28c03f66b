// FalkorDB: the ends are found by internal id (id(), a NodeByIdSeek).
// idempotent: no
UNWIND $rows AS row
MATCH (a)
WHERE id(a) = row.source
MATCH (b)
WHERE id(b) = row.target
CREATE (a)-[r:`{{type}}`]->(b)
SET r = row.props
RETURN count(r) AS created
