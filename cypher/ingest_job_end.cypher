// Remove the leases $ids: jobs that ended, or that died (their process is gone, or their
// heartbeat stopped).
// idempotent: yes
MATCH (job:IngestJob)
WHERE job.id IN $ids
DELETE job
