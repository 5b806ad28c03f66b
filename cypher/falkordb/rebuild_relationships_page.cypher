// FalkorDB: typeOf() names a vector 'Vectorf32'.
// idempotent: yes
MATCH (a)-[r]->(b)
WHERE id(a) >= $from AND id(a) <= $to
RETURN id(r) AS id, type(r) AS type, id(a) AS source, id(b) AS target, properties(r) AS props,
       [k IN keys(r) | [k, typeOf(r[k])]] AS types
