// Every registered ingestion job but $id, with the age of its last heartbeat (milliseconds).
// idempotent: yes
MATCH (job:IngestJob)
WHERE job.id <> $id
RETURN job.id AS id, job.host AS host, job.pid AS pid, timestamp() - job.heartbeat_at AS age_ms
ORDER BY id
