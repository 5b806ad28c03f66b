// Register ingestion job $id (a lease: its host and process id, and a heartbeat in the server's
// clock, milliseconds). Neo4j only: the embedded store coordinates its jobs with a lock file.
// idempotent: yes
MERGE (job:IngestJob {id: $id})
SET job.host = $host, job.pid = $pid, job.heartbeat_at = timestamp(), job.recovering = false
