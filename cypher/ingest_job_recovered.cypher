// The job running alone has removed what crashed jobs left: other jobs may start writing.
MATCH (job:IngestJob {id: $id})
SET job.recovering = false
