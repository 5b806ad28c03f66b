// How many Chunk nodes there are: the most the chunks vector index can hold, the bound of a
// search widened until it finds enough readable neighbours (kgrag/executor/nearest.py). A plain
// count of one label, which both engines answer from their label statistics (Neo4j's count
// store, FalkorDB's label matrix) instead of scanning the nodes.
// idempotent: yes
MATCH (c:Chunk)
RETURN count(c) AS size
