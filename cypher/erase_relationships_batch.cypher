// Delete up to $batch relationships; Neo4jStore.erase() repeats it until it returns 0, before
// erase_batch deletes the nodes: a batch of nodes detached with all their relationships at once
// overran a 1 GB heap's transaction memory on dense entities (2,000 documents, 50,952 entities).
// idempotent: yes
MATCH ()-[r]->()
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
