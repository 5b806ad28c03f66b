// Every index of the graph: what kind, over which label or relationship type and properties,
// with which options (a rebuilt graph must have the same ones: kgrag.graph.rebuild).
// idempotent: yes
SHOW INDEXES YIELD type, entityType, labelsOrTypes, properties, options
RETURN type AS types, entityType AS entitytype, labelsOrTypes[0] AS label, properties,
       options
