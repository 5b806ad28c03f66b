// Drop a vector index if it exists.
// `{{name}}`: an allow-listed index name substituted by kgrag.graph.cypher.render().
DROP INDEX `{{name}}` IF EXISTS
