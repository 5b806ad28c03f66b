// Ingestion job $id has finished removing what crashed jobs left.
// idempotent: yes
MATCH (job:IngestJob {id: $id})
SET job.recovering = false
