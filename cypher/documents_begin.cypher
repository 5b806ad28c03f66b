// Create or refresh a batch of documents' nodes (document_begin for many); each stays invisible
// to readers until documents_complete.
// idempotent: yes
UNWIND $rows AS row
MERGE (d:Document {id: row.id})
SET d.uri = row.uri, d.sha256 = row.sha256, d.modality = row.modality, d.mime = row.mime,
    d.title = row.title, d.bytes = row.bytes, d.acl = row.acl, d.tags = row.tags,
    d.ingested_at = row.ingested_at, d.language = row.language, d.summary = row.summary,
    d.duration_s = row.duration_s, d.file_modified_at = row.file_modified_at,
    d.content_created_at = row.content_created_at, d.content_modified_at = row.content_modified_at,
    d.authors = row.authors,
    d.status = 'ingesting'
