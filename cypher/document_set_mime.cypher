// Set the stored MIME type of the documents of $rows (id, value): migrations
// 0013_man_page_types and 0014_data_format_types, typing what an older kgrag stored as plain text.
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.mime = row.value
