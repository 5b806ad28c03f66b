// FalkorDB: the nodes by internal id (id(), a NodeByIdSeek).
// idempotent: yes
UNWIND $ids AS i
MATCH (n)
WHERE id(n) = i
SET n:`{{label}}`
RETURN count(n) AS labelled
