// Delete up to $batch nodes with their relationships; Neo4jStore.erase() repeats it until it
// returns 0 (tests, benchmarks and the demo start from an empty database; Community has one).
// idempotent: yes
MATCH (n)
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
