// A full-text index on one node property (schema op FulltextIndex; migrations only).
// `{{name}}`, `{{label}}`, `{{property}}`: allow-listed identifiers substituted by
// kgrag.graph.cypher.render() (Cypher has no parameters for identifiers).
// idempotent: yes
CREATE FULLTEXT INDEX `{{name}}` IF NOT EXISTS FOR (n:`{{label}}`) ON EACH [n.`{{property}}`]
