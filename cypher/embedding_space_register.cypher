// Register an embedding space (model and dimension of one family of vectors).
// idempotent: yes
MERGE (s:EmbeddingSpace {name: $name})
ON CREATE SET s.id = $name, s.model = $model, s.dimensions = $dimensions, s.similarity = $similarity
