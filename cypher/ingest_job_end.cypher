// Remove the leases $ids: jobs that ended, or that died (their process is gone, or their
// heartbeat stopped).
MATCH (job:IngestJob)
WHERE job.id IN $ids
DELETE job
