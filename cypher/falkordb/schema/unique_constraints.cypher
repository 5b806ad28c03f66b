// FalkorDB: constraints are built in the background after GRAPH.CONSTRAINT CREATE; status is
// OPERATIONAL, UNDER CONSTRUCTION (or PENDING), or FAILED (e.g. duplicate values).
// idempotent: yes
CALL db.constraints() YIELD type, label, properties, entitytype, status
WITH type, label, properties, entitytype, status
WHERE type = 'UNIQUE' AND entitytype = 'NODE' AND size(properties) = 1
RETURN label, properties[0] AS property, status
