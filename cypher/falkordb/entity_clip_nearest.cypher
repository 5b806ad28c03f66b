// FalkorDB: vecf32 and cosine distance in [0, 2] -> similarity (1 + cos) / 2 in [0, 1], as Neo4j.
// idempotent: yes
CALL db.idx.vector.queryNodes('Entity', 'clip_embedding', $k, vecf32($vector)) YIELD node, score
RETURN node.id AS id, node.name AS name, 1.0 - score / 2.0 AS score
