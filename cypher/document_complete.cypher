// Make a fully written document visible to readers.
MATCH (d:Document {id: $id})
SET d.status = 'complete', d.chunk_count = $chunk_count, d.image_count = $image_count
