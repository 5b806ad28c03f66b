// FalkorDB: vector indexes are unnamed, dropped by label and property.
// `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render().
// idempotent: yes
DROP VECTOR INDEX FOR (n:`{{label}}`) ON (n.`{{property}}`)
