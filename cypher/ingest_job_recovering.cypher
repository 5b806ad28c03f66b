// How many other live jobs are still removing what crashed jobs left (a job waits for them
// before it writes, or its own unfinished documents would be taken for leftovers).
MATCH (job:IngestJob)
WHERE job.id <> $lock_id AND job.id <> $id AND job.recovering = true
  AND job.heartbeat_at >= timestamp() - $stale_ms
RETURN count(job) AS n
