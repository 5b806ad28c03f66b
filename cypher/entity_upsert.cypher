// Write a batch of entities (normalised name as id). The display name is the best surface form
// ever offered: highest name_rank (computed by the writer), then the alphabetically first form;
// its folded form (kgrag.text.folding: only when it has accents) goes with it.
// idempotent: yes
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e.type = row.type
WITH e, row,
     (e.name IS NULL OR e.name_rank IS NULL OR row.name_rank > e.name_rank
      OR (row.name_rank = e.name_rank AND row.name < e.name)) AS better
SET e.name = CASE WHEN better THEN row.name ELSE e.name END,
    e.name_folded = CASE WHEN better THEN row.name_folded ELSE e.name_folded END,
    e.name_rank = CASE WHEN better THEN row.name_rank ELSE e.name_rank END
