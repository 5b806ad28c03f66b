// How many nodes each vector index can hold at most (the nodes of its label): the bound of a
// search widened until it finds enough readable neighbours (kgrag/executor/nearest.py). Counts only.
// idempotent: yes
OPTIONAL MATCH (c:Chunk)
WITH count(c) AS chunks
OPTIONAL MATCH (i:Image)
WITH chunks, count(i) AS images
OPTIONAL MATCH (e:Entity)
RETURN chunks, images, count(e) AS entities
