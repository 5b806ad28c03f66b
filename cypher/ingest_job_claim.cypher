// May job $id remove what crashed jobs left? Only when no other live job (heartbeat within
// $ttl_ms) is registered. SET write-locks every lease, its own included, so two claims run one
// after the other: the second sees the first's lease and its `recovering` flag, and a job that
// registers after a claim waits for that claim's lock. Returns whether this job recovers, and
// how many other live jobs are recovering now (a new job waits until they are done).
// idempotent: yes
MATCH (job:IngestJob)
SET job.claimed_at = timestamp()
WITH collect(job) AS jobs
UNWIND [j IN jobs WHERE j.id = $id] AS me
WITH me, [j IN jobs WHERE j.id <> $id AND j.heartbeat_at >= timestamp() - $ttl_ms] AS live
SET me.recovering = size(live) = 0
RETURN me.recovering AS recover, size([j IN live WHERE j.recovering]) AS recovering
