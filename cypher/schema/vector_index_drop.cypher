// Drop a vector index if it exists.
// `{{name}}`: an allow-listed index name substituted by kgrag.graph.cypher.render().
// idempotent: yes
DROP INDEX `{{name}}` IF EXISTS
