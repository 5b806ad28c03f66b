// Rebuild of a Neo4j database (kgrag.graph.neo4j_rebuild): the transactions running now, each
// with its database and its id ('neo4j-transaction-N', N counting every transaction the
// database began). Read before and after the export: another transaction meanwhile (another
// client) and the rebuild is refused.
// idempotent: yes
SHOW TRANSACTIONS YIELD transactionId, database
RETURN transactionId AS id, database
