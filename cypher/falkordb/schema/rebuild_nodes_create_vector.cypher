// FalkorDB: a vector is written with vecf32() (float32 values, what the vector index reads).
// idempotent: no
UNWIND $rows AS row
CREATE (n:`{{label}}`)
SET n = row.props, n.`{{property}}` = vecf32(row.vector)
RETURN id(n) AS id
