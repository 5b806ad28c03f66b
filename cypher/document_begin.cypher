// Create or refresh a document's node; it stays invisible to readers until document_complete.
MERGE (d:Document {id: $id})
SET d.uri = $uri, d.sha256 = $sha256, d.modality = $modality, d.mime = $mime, d.title = $title,
    d.bytes = $bytes, d.acl = $acl, d.tags = $tags, d.ingested_at = $ingested_at,
    d.language = $language, d.summary = $summary, d.status = 'ingesting'
