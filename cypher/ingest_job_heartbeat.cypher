// Keep ingestion job $id's lease alive while it runs.
MATCH (job:IngestJob {id: $id})
SET job.heartbeat_at = timestamp()
