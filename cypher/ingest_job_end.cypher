// An ingestion job ended (done or failed): it no longer holds other jobs' recovery back.
MATCH (job:IngestJob {id: $id})
DETACH DELETE job
