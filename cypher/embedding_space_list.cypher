// The embedding spaces this store was built with.
// idempotent: yes
MATCH (s:EmbeddingSpace)
RETURN s.name AS name, s.model AS model, s.dimensions AS dimensions, s.similarity AS similarity
