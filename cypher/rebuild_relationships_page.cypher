// Rebuild (kgrag.graph.rebuild): the relationships leaving the nodes whose ids are $from to $to,
// each with its type, the ids of its ends, its properties and the type of each property.
// idempotent: yes
MATCH (a)-[r]->(b)
WHERE id(a) >= $from AND id(a) <= $to
RETURN id(r) AS id, type(r) AS type, id(a) AS source, id(b) AS target, properties(r) AS props,
       [k IN keys(r) | [k, valueType(r[k])]] AS types
