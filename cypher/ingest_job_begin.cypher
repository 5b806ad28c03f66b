// Register an ingestion job (Neo4j: jobs of other processes and machines share the database)
// and say how many other live jobs run, so that only a job running alone removes what crashed
// jobs left unfinished (it is then marked `recovering` until it is done). Writing the one lock
// node first serialises concurrent registrations: its write lock is held until commit, so each
// registration sees the ones committed before it. A job whose heartbeat (server clock, ms) is
// older than $stale_ms is dead (its process was killed): its node is removed here.
MERGE (lock:IngestJob {id: $lock_id})
SET lock.touched_at = timestamp()
WITH lock
OPTIONAL MATCH (dead:IngestJob)
WHERE dead.id <> $lock_id AND dead.heartbeat_at < timestamp() - $stale_ms
DETACH DELETE dead
WITH DISTINCT lock
MERGE (job:IngestJob {id: $id})
SET job.heartbeat_at = timestamp(), job.started_at = timestamp(), job.host = $host
WITH job
OPTIONAL MATCH (other:IngestJob)
WHERE other.id <> $lock_id AND other.id <> $id
WITH job, count(other) AS others
SET job.recovering = (others = 0)
RETURN others
