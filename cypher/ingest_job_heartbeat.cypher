// Keep ingestion job $id's lease alive while it runs.
// idempotent: yes
MATCH (job:IngestJob {id: $id})
SET job.heartbeat_at = timestamp()
