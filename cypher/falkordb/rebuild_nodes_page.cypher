// FalkorDB: typeOf() names a vector 'Vectorf32' (a list of floats is a 'List').
// idempotent: yes
MATCH (n)
WHERE id(n) > $after
WITH n
ORDER BY id(n)
LIMIT $page
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props,
       [k IN keys(n) | [k, typeOf(n[k])]] AS types
