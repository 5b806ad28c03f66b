// FalkorDB: range indexes have no name and no IF NOT EXISTS (the store ignores "already
// indexed"). Also the index a unique constraint needs, which the store then creates with the
// GRAPH.CONSTRAINT command (FalkorDB has no CREATE CONSTRAINT).
// `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render().
// idempotent: yes
CREATE INDEX FOR (n:`{{label}}`) ON (n.`{{property}}`)
