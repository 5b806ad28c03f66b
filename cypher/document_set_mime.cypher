// Set the stored MIME type of the documents of $rows (id, value): migration
// 0013_man_page_types, storing the man pages an older kgrag stored as plain text as text/troff.
// idempotent: yes
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.mime = row.value
