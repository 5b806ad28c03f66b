// A range index on one node property (schema op PropertyIndex; migrations only).
// `{{name}}`, `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render() (Cypher has no parameters for identifiers).
// idempotent: yes
CREATE INDEX `{{name}}` IF NOT EXISTS FOR (n:`{{label}}`) ON (n.`{{property}}`)
