// Set the folded name (kgrag.text.folding) of the entities of $rows (migration
// 0012_folded_names).
// idempotent: yes
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.name_folded = row.value
