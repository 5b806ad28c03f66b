// A running ingestion job says it is alive (server clock, ms); see ingest_job_begin.
MERGE (job:IngestJob {id: $id})
SET job.heartbeat_at = timestamp()
